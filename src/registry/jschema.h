/*
 * jschema.h - the JSON Schema subset used by .jay-action files.
 *
 * Two jobs:
 *   jschema_check()    - is this a schema we support? Every keyword must be
 *                        one we enforce (or a pure annotation such as
 *                        `description`); anything else is a problem, never
 *                        silently ignored.
 *   jschema_validate() - does this instance satisfy the schema?
 *
 * Supported: type (string|number|integer|boolean|object|array|null, or an
 * array of those), properties, required, additionalProperties (false or a
 * schema), enum, const, items (a schema), minItems, maxItems, minimum,
 * maximum, minLength, maxLength (counted in Unicode characters), pattern
 * (POSIX ERE, unanchored as in JSON Schema), anyOf.
 * Annotations accepted and ignored: description, title, default, examples,
 * $comment, format (annotation only; no format assertions).
 *
 * No coercion: "1" is not an integer; 1.0 is a number but not an integer
 * only when it has a fractional part (JSON 1.0 parsed by jansson is a real:
 * it counts as an integer when its value is integral).
 * Recursion is bounded by BOUND_SCHEMA_DEPTH in both functions.
 *
 * Thread-safety: pure functions over their arguments.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_JSCHEMA_H
#define APP_JSCHEMA_H

#include "core/common.h"
#include "registry/bounds.h"

struct json_t;
struct status_error;

/*
 * Called once per problem found by jschema_check(): `pointer` is the JSON
 * pointer of the offending keyword relative to the schema root (e.g.
 * "/properties/limit/minimum"), `msg` a lowercase sentence without a final
 * period (e.g. "unsupported keyword 'oneOf'").
 */
typedef void (*jschema_report_fn)(void *ctx, const char *pointer,
                                  const char *msg);

/* Check a schema; returns the number of problems reported (0 = usable). */
int jschema_check(const struct json_t *schema, jschema_report_fn report,
                  void *ctx);

/*
 * Validate `instance` against `schema` (which passed jschema_check()).
 * Returns 0 when valid, or -1 with the first violation in `err` (may be
 * NULL): ST_SCHEMA, err->path the JSON pointer into the instance ("" for
 * the root), err->rule the keyword broken ("type", "required", ...) and a
 * message such as "/items/2/price: must be >= 0 (minimum)", shorter than
 * SCHEMA_MESSAGE_MAX bytes.
 */
int jschema_validate(const struct json_t *schema, const struct json_t *instance,
                     struct status_error *err);

#endif /* APP_JSCHEMA_H */

/*
 * tsgen.h - TypeScript declarations from .jay-action schemas.
 *
 * `gemini-agent actions types` writes NAME.jay-action.d.ts next to (or
 * under --out) each .jay-action, so front-end code that calls an action
 * over HTTP gets typed input and output:
 *
 *   export interface SearchProductsInput { query: string; limit?: number; }
 *   export interface SearchProductsOutput { ... }
 *
 * Mapping: object -> interface/object literal (required keys plain,
 * others `?`), additionalProperties schema -> index signature
 * `[key: string]: T`, array -> `T[]` (parenthesised unions), enum and const
 * -> unions of literals, anyOf -> union, string/number/integer/boolean/null
 * -> TS primitives (integer -> number), type arrays -> unions, no or empty
 * schema -> `unknown`. Property names that are not identifiers are quoted.
 * Descriptions become JSDoc comments (with any comment terminator escaped).
 * A root schema that is not an object becomes `export type X = ...;`.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef APP_TSGEN_H
#define APP_TSGEN_H

#include "core/common.h"

struct json_t;
struct sbuf;

/*
 * "searchProducts" -> "SearchProducts", "get-product_by slug" ->
 * "GetProductBySlug": words split on non-alphanumerics, each capitalised;
 * a leading digit gets a leading underscore. Writes at most `size` bytes
 * including the NUL; returns 0, or -1 when it does not fit or is empty.
 */
int tsgen_type_name(const char *action_name, char *out, size_t size);

/*
 * Append the declarations of one action to `out`: a header comment naming
 * `source` (the .jay-action path), then `<Type>Input` from `input_schema`
 * and `<Type>Output` from `output_schema` (NULL -> `unknown`).
 * Returns 0, or -1 when `out` hits its cap.
 */
int tsgen_action(struct sbuf *out, const char *action_name,
                 const char *description, const char *source,
                 const struct json_t *input_schema,
                 const struct json_t *output_schema);

#endif /* APP_TSGEN_H */

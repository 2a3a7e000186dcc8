/*
 * action.c - validated, bounded execution of a server action.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "registry/action.h"
#include "core/arena.h"
#include "core/bounds.h"
#include "core/config.h"
#include "gemini-agent/handler.h"
#include "registry/jschema.h"
#include "core/logmsg.h"
#include "registry/plugin.h"
#include "registry/soplugin.h"
#include "core/status.h"

#include "core/watch.h"

#include <jansson.h>
#include <string.h>

_Static_assert(ACTION_ASKS_USER == SOPLUGIN_ASKS_USER,
               "action_run passes soplugin_execute's question on as it is");

/* Count the bytes of the serialised output, stopping past the cap. */
struct size_probe {
    size_t n;
};

static int
count_bytes(const char *buf, size_t size, void *data)
{
    struct size_probe *p = data;
    (void)buf;
    p->n += size;
    return p->n > BOUND_ACTION_OUTPUT_BYTES ? -1 : 0;
}

int
action_run(const struct config_actions *env, const struct plugin_action *act,
           const struct action_who *who, const json_t *input, struct arena *a,
           json_t **output, struct status_error *err)
{
    struct handler_ctx ctx = {act->plugin_dir, env->data_dir, a};
    struct size_probe probe = {0};
    json_t *out = NULL;
    int rc;

    *output = NULL;
    /* A route entry (the chat protocol) has no handler: its own route
     * serves it, and dispatch never hands it here. */
    if (act->handler == NULL && act->so == NULL)
        return status_set(err, ST_UNKNOWN_ACTION,
                          "'%s' is not an action that can be run here",
                          act->name);
    /* jschema_validate() sets ST_SCHEMA with the path and rule */
    if (act->input_schema != NULL &&
        jschema_validate(act->input_schema, input, err) != 0)
        return -1;
    if (act->input_schema == NULL && !json_is_object(input))
        return status_set(err, ST_BAD_REQUEST,
                          "the input of '%s' must be a JSON object", act->name);
    watch_action_begin(env->timeout_ms);
    /* a shared object's tool runs under the same watchdog and bounds */
    rc = act->so != NULL ? soplugin_execute(act->so, act->tool, env->data_dir,
                                            who, input, a, &out, err)
                         : act->handler->run(&ctx, input, &out, err);
    watch_action_end();
    if (rc == SOPLUGIN_ASKS_USER) /* the question: asked, not a result */
        return (*output = arena_take_json(a, out)) != NULL
                   ? ACTION_ASKS_USER
                   : status_set(err, ST_NO_MEMORY, "out of memory");
    if (rc != 0) {
        json_decref(out);
        if (err->code == ST_OK)
            status_set(err, ST_ACTION_FAILED, "the action '%s' failed",
                       act->name);
        return -1;
    }
    if (out == NULL)
        return status_set(err, ST_ACTION_FAILED,
                          "the action '%s' returned nothing", act->name);
    if (json_dump_callback(out, count_bytes, &probe, APP_JSON_FLAGS) != 0 &&
        probe.n <= BOUND_ACTION_OUTPUT_BYTES) {
        json_decref(out); /* the writer ran out of memory, not of room */
        return status_set(err, ST_NO_MEMORY, "out of memory");
    }
    if (probe.n > BOUND_ACTION_OUTPUT_BYTES) {
        log_err("action '%s' returned more than %u bytes", act->name,
                BOUND_ACTION_OUTPUT_BYTES);
        json_decref(out);
        return status_set(err, ST_ACTION_FAILED,
                          "the action '%s' returned too much data", act->name);
    }
    *output = arena_take_json(a, out);
    return *output ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
}

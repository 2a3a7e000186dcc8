/*
 * shop.c - the demo shop plugin's handlers over products.json.
 *
 * The catalog is a JSON file in the plugin folder, read per call: it is a
 * few kilobytes, and reading it keeps the handler free of state (and shows
 * edits to the file at once). Reviews are appended, one JSON object per
 * line, to <dataDir>/shop-reviews.jsonl under an exclusive lock, so
 * several workers can add reviews at the same time.
 *
 * Inputs arrive validated against the .jay-action schemas; the checks here
 * are only the ones a schema cannot express (does the product exist?).
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "gemini-agent/handler.h"
#include "core/jsonin.h"
#include "core/jsonout.h"
#include "core/logmsg.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHOP_DEFAULT_LIMIT     10
#define SHOP_REVIEWS_FILE      "shop-reviews.jsonl"
/* The reviews file stops growing here (a demo's reviews, many times over). */
#define SHOP_REVIEWS_MAX_BYTES (8L * 1024 * 1024)
/* products.json is read whole per call; a catalog past this is a mistake. */
#define SHOP_CATALOG_MAX       (4u * 1024 * 1024)

/* The catalog array (new reference), or NULL with err set. */
static json_t *
load_catalog(const struct handler_ctx *ctx, struct status_error *err)
{
    char path[4096];
    json_error_t jerr;
    json_t *cat;
    bool oom;

    snprintf(path, sizeof(path), "%s/products.json", ctx->plugin_dir);
    cat = jsonin_load_file(path, SHOP_CATALOG_MAX, JSON_REJECT_DUPLICATES,
                           &jerr, &oom);
    if (oom) {
        status_set(err, ST_NO_MEMORY, "out of memory");
        return NULL;
    }
    if (cat == NULL || !json_is_array(cat)) {
        /* The path goes to the log for the site owner, not to the client. */
        log_err("shop: cannot load catalog '%s': %s", path,
                cat ? "not an array" : jerr.text);
        json_decref(cat);
        status_set(err, ST_ACTION_FAILED, "the product catalog is unavailable");
        return NULL;
    }
    return cat;
}

static const char *
field(const json_t *product, const char *key)
{
    const char *s = json_string_value(json_object_get(product, key));
    return s ? s : "";
}

static int
search_products(const struct handler_ctx *ctx, const json_t *input,
                json_t **output, struct status_error *err)
{
    const char *query = json_string_value(json_object_get(input, "query"));
    json_t *limit_v = json_object_get(input, "limit");
    json_int_t limit = limit_v ? json_integer_value(limit_v)
                               : SHOP_DEFAULT_LIMIT;
    json_t *cat, *found = NULL, *p;
    json_int_t total = 0;
    size_t i;

    if (json_is_real(limit_v)) /* 5.0 passes an integer schema */
        limit = (json_int_t)json_real_value(limit_v);
    cat = load_catalog(ctx, err);
    if (cat == NULL)
        return -1;
    found = json_array();
    if (found == NULL)
        goto oom;
    json_array_foreach(cat, i, p) {
        if (strcasestr(field(p, "name"), query) == NULL &&
            strcasestr(field(p, "category"), query) == NULL)
            continue;
        total++;
        if ((json_int_t)json_array_size(found) < limit &&
            json_array_append(found, p) != 0)
            goto oom;
    }
    *output = json_pack("{s:o, s:I}", "products", found, "total", total);
    found = NULL;
    json_decref(cat);
    return *output ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
oom:
    json_decref(found);
    json_decref(cat);
    return status_set(err, ST_NO_MEMORY, "out of memory");
}

/* The product whose `key` equals `value` (borrowed from cat), or NULL. */
static json_t *
find_product(json_t *cat, const char *key, const char *value)
{
    size_t i;
    json_t *p;

    json_array_foreach(cat, i, p) {
        if (strcmp(field(p, key), value) == 0)
            return p;
    }
    return NULL;
}

static int
get_product_by_slug(const struct handler_ctx *ctx, const json_t *input,
                    json_t **output, struct status_error *err)
{
    const char *slug = json_string_value(json_object_get(input, "slug"));
    json_t *cat = load_catalog(ctx, err), *p;
    int rc = 0;

    if (cat == NULL)
        return -1;
    p = find_product(cat, "slug", slug);
    if (p == NULL)
        rc = status_set(err, ST_NOT_FOUND, "no product has the slug '%s'",
                        slug);
    else if ((*output = json_pack("{s:O}", "product", p)) == NULL)
        rc = status_set(err, ST_NO_MEMORY, "out of memory");
    json_decref(cat);
    return rc;
}

/* Append one line to the reviews file; 0 or -1 (logged). */
static int
append_review(const struct handler_ctx *ctx, const char *line, size_t len)
{
    char path[4096];
    int fd, rc = -1;

    if (mkdir(ctx->data_dir, 0750) != 0 && errno != EEXIST) {
        log_err("shop: cannot create data folder '%s': %s", ctx->data_dir,
                strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%s", ctx->data_dir, SHOP_REVIEWS_FILE);
    /* O_NOFOLLOW: a symlink put in the data folder must not send reviews
     * into another file the server may write */
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
              0640);
    if (fd < 0) {
        log_err("shop: cannot open '%s': %s", path,
                errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        return -1;
    }
    /* One write per review under the lock: readers never see half a line.
     * The file has a size cap: a flood of reviews fills it, not the disk. */
    struct stat st;
    if (flock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0)
        log_err("shop: cannot lock '%s': %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode) ||
             st.st_size + (off_t)len > SHOP_REVIEWS_MAX_BYTES)
        log_err("shop: '%s' is %s; review not added", path,
                S_ISREG(st.st_mode) ? "full" : "not a regular file");
    else if (write(fd, line, len) == (ssize_t)len)
        rc = 0;
    else
        log_err("shop: cannot append to '%s': %s", path, strerror(errno));
    close(fd);
    return rc;
}

static int
add_review(const struct handler_ctx *ctx, const json_t *input, json_t **output,
           struct status_error *err)
{
    const char *id = json_string_value(json_object_get(input, "productId"));
    json_t *cat = load_catalog(ctx, err), *review = NULL;
    char stamp[32], rid[64], *line = NULL;
    struct timespec now;
    struct tm tm;
    int rc = -1;

    if (cat == NULL)
        return -1;
    if (find_product(cat, "_id", id) == NULL) {
        status_set(err, ST_NOT_FOUND, "no product has the id '%s'", id);
        goto out;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(rid, sizeof(rid), "r%lld%06ld-%ld", (long long)now.tv_sec,
             now.tv_nsec / 1000, (long)getpid());
    review = json_pack("{s:s, s:s, s:O, s:O, s:s}", "id", rid, "productId", id,
                       "rating", json_object_get(input, "rating"), "text",
                       json_object_get(input, "text"), "createdAt", stamp);
    size_t len;
    /* the answer too is made before the write: once the review is saved,
     * nothing here can fail and say it was not */
    line = review
               ? jsonout_dumps(review, APP_JSON_FLAGS, JSONOUT_UNBOUNDED, &len)
               : NULL;
    *output = line ? json_pack("{s:b, s:O}", "ok", 1, "review", review) : NULL;
    if (*output == NULL) {
        status_set(err, ST_NO_MEMORY, "out of memory");
        goto out;
    }
    line[len] = '\n'; /* over the NUL: the buffer is written, not read */
    if (append_review(ctx, line, len + 1) != 0) {
        json_decref(*output);
        *output = NULL;
        status_set(err, ST_ACTION_FAILED,
                   "the review could not be saved; try again later");
        goto out;
    }
    rc = 0;
out:
    free(line);
    json_decref(review);
    json_decref(cat);
    return rc;
}

static int
list_categories(const struct handler_ctx *ctx, const json_t *input,
                json_t **output, struct status_error *err)
{
    json_t *cat = load_catalog(ctx, err), *counts = NULL, *list = NULL, *p, *v;
    const char *name;
    size_t i;

    (void)input;
    if (cat == NULL)
        return -1;
    counts = json_object();
    list = json_array();
    if (counts == NULL || list == NULL)
        goto oom;
    json_array_foreach(cat, i, p) {
        const char *c = field(p, "category");
        json_int_t n = json_integer_value(json_object_get(counts, c));
        if (json_object_set_new(counts, c, json_integer(n + 1)) != 0)
            goto oom;
    }
    json_object_foreach(counts, name, v) {
        if (json_array_append_new(
                list, json_pack("{s:s, s:O}", "name", name, "count", v)) != 0)
            goto oom;
    }
    *output = json_pack("{s:o}", "categories", list);
    list = NULL;
    json_decref(counts);
    json_decref(cat);
    return *output ? 0 : status_set(err, ST_NO_MEMORY, "out of memory");
oom:
    json_decref(list);
    json_decref(counts);
    json_decref(cat);
    return status_set(err, ST_NO_MEMORY, "out of memory");
}

const struct handler_def shop_handlers[] = {
    {"shop.searchProducts", search_products},
    {"shop.getProductBySlug", get_product_by_slug},
    {"shop.addReview", add_review},
    {"shop.listCategories", list_categories},
    {NULL, NULL},
};

/*
 * check_credentials.c - Google credentials (gemini/credentials.h), Vertex
 * AI's URLs (gemini/vertex.h) and the transport's two ways of sending a
 * secret (x-goog-api-key or Authorization: Bearer).
 *
 * The token flows run against tests/mock/token_mock.py on 127.0.0.1,
 * started once per test case and stopped by PID. The RSA key is made here
 * (libcrypto); the mock gets its public half and verifies every JWT with
 * it, so a token only comes back for a correctly signed assertion. gcloud
 * is a shell script in a temporary folder. The environment is a table
 * passed through cred_opts, never the process's own.
 *
 * Every error text is checked for the secrets of the test: the private
 * key, client secret, refresh token, tokens and any JWT ("eyJ", the
 * base64url of '{"').
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/arena.h"
#include "core/status.h"
#include "gemini/credentials.h"
#include "gemini/gemini.h"
#include "gemini/vertex.h"
#include "gemini/bounds.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#define SA_EMAIL "agent@test-project.iam.gserviceaccount.com"
#define SA_KID   "kid-0123456789"
#define CLIENT_SECRET "client-secret-d3adb33f"
#define REFRESH_TOKEN "refresh-token-c0ffee"
#define API_KEY "AIzaTestKey-1234567890"

/* --- the suite's world: a folder, two keys, the mock -------------------- */

static char dir[64];
static char *pem_a, *pem_b; /* the mock knows A; B is a stranger */
static EVP_PKEY *key_a;
static pid_t mock_pid = -1;
static int mock_port;

static char *
pem_of(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *p = NULL, *s;
    long n;

    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL,
                                              NULL),
                     1);
    n = BIO_get_mem_data(b, &p);
    s = strndup(p, (size_t)n);
    BIO_free(b);
    return s;
}

static char *
path_in(const char *name)
{
    char *p = NULL;

    ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

static void
write_file(const char *path, const char *text, int mode)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, (mode_t)mode), 0);
}

static void
world_setup(void)
{
    BIGNUM *n = NULL, *e = NULL;
    EVP_PKEY *kb;
    char *nhex, *ehex, *keyfile, *portfile, json[2048];
    long t0;

    strcpy(dir, "/tmp/ga-cred-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    key_a = EVP_RSA_gen(2048);
    kb = EVP_RSA_gen(2048);
    ck_assert_ptr_nonnull(key_a);
    ck_assert_ptr_nonnull(kb);
    pem_a = pem_of(key_a);
    pem_b = pem_of(kb);
    EVP_PKEY_free(kb);

    /* the public half, for the mock */
    ck_assert_int_eq(EVP_PKEY_get_bn_param(key_a, OSSL_PKEY_PARAM_RSA_N, &n),
                     1);
    ck_assert_int_eq(EVP_PKEY_get_bn_param(key_a, OSSL_PKEY_PARAM_RSA_E, &e),
                     1);
    nhex = BN_bn2hex(n);
    ehex = BN_bn2dec(e);
    snprintf(json, sizeof(json),
             "{\"n\":\"%s\",\"e\":%s,\"kid\":\"%s\",\"iss\":\"%s\"}", nhex,
             ehex, SA_KID, SA_EMAIL);
    OPENSSL_free(nhex);
    OPENSSL_free(ehex);
    BN_free(n);
    BN_free(e);
    keyfile = path_in("mock-key.json");
    portfile = path_in("mock.port");
    write_file(keyfile, json, 0600);

    mock_pid = fork();
    ck_assert_int_ge(mock_pid, 0);
    if (mock_pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0 && getenv("CRED_MOCK_LOG") == NULL)
            dup2(null, STDERR_FILENO);
        execlp("python3", "python3", "../mock/token_mock.py", "--port", "0",
               "--port-file", portfile, "--key-file", keyfile, (char *)NULL);
        _exit(127);
    }
    for (t0 = time(NULL); time(NULL) - t0 < 10;) {
        FILE *f = fopen(portfile, "r");
        if (f != NULL) {
            int ok = fscanf(f, "%d", &mock_port);
            fclose(f);
            if (ok == 1)
                break;
        }
        usleep(20000);
    }
    ck_assert_int_gt(mock_port, 0);
    free(keyfile);
    free(portfile);
}

static void
world_teardown(void)
{
    char cmd[128];

    if (mock_pid > 0) {
        kill(mock_pid, SIGTERM);
        waitpid(mock_pid, NULL, 0);
        mock_pid = -1;
    }
    /* only ever our own mkdtemp() folder under /tmp */
    if (strncmp(dir, "/tmp/ga-cred-", 13) == 0) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
    EVP_PKEY_free(key_a);
    free(pem_a);
    free(pem_b);
    key_a = NULL;
    pem_a = pem_b = NULL;
}

/* --- a fake environment and clock -------------------------------------- */

struct env {
    const char *k[12], *v[12];
    size_t n;
};

static const char *
env_lookup(void *ctx, const char *name)
{
    struct env *e = ctx;

    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->k[i], name) == 0)
            return e->v[i];
    return NULL;
}

static void
env_set(struct env *e, const char *k, const char *v)
{
    ck_assert_uint_lt(e->n, ARRAY_SIZE(e->k));
    e->k[e->n] = k;
    e->v[e->n++] = v;
}

static time_t fake_time;

static time_t
fake_now(void *ctx)
{
    (void)ctx;
    return fake_time;
}

/* Options over `e`, an empty PATH folder, the fake clock at real time. */
static struct cred_opts
opts_for(struct env *e)
{
    struct cred_opts o = {0};

    o.getenv = env_lookup;
    o.env_ctx = e;
    o.now = fake_now;
    fake_time = time(NULL);
    return o;
}

/* No secret of this suite in the error's text. */
static void
assert_clean(const struct status_error *err)
{
    const char *const secrets[] = {CLIENT_SECRET, REFRESH_TOKEN, API_KEY,
                                   "sa-token", "au-token", "eyJ",
                                   "gcloud-token", "PRIVATE KEY"};

    ck_assert_int_ne(err->code, ST_OK);
    for (size_t i = 0; i < ARRAY_SIZE(secrets); i++)
        ck_assert_msg(strstr(err->text, secrets[i]) == NULL,
                      "secret \"%s\" in the error: %s", secrets[i],
                      err->text);
    /* and no line of either private key */
    for (int k = 0; k < 2; k++) {
        const char *p = k ? pem_b : pem_a;
        char line[65];
        if (p == NULL)
            continue;
        p = strchr(p, '\n') + 1; /* the first base64 line */
        snprintf(line, sizeof(line), "%.20s", p);
        ck_assert_msg(strstr(err->text, line) == NULL, "key in: %s",
                      err->text);
    }
}

/* A service-account key file with `pem`, posting to `token_uri`. */
static char *
sa_file(const char *name, const char *pem, const char *token_uri)
{
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type",
                          "service_account", "project_id", "test-project",
                          "private_key_id", SA_KID, "private_key", pem,
                          "client_email", SA_EMAIL, "client_id", "1234",
                          "token_uri", token_uri);
    char *text = json_dumps(j, JSON_INDENT(2)), *path = path_in(name);

    write_file(path, text, 0600);
    free(text);
    json_decref(j);
    return path;
}

static char *
au_file(const char *name, const char *refresh)
{
    char text[512], *path = path_in(name);

    snprintf(text, sizeof(text),
             "{\"type\": \"authorized_user\", \"client_id\": \"cid.apps\", "
             "\"client_secret\": \"%s\", \"refresh_token\": \"%s\", "
             "\"quota_project_id\": \"quota-p\"}",
             CLIENT_SECRET, refresh);
    write_file(path, text, 0600);
    return path;
}

static char *
mock_url(const char *path)
{
    char *u = NULL;

    ck_assert_int_ge(asprintf(&u, "http://127.0.0.1:%d%s", mock_port, path),
                     0);
    return u;
}

/* --- the order ---------------------------------------------------------- */

START_TEST(api_key_wins)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char *sa = sa_file("sa.json", pem_a, "https://oauth2.googleapis.com/token");

    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", sa);
    env_set(&e, "GOOGLE_API_KEY", "google-key");
    env_set(&e, "GEMINI_API_KEY", API_KEY);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_GEMINI_API_KEY);
    ck_assert_str_eq(cred_source_name(c.source), "GEMINI_API_KEY");
    ck_assert(!cred_is_bearer(&c));
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), 0);
    ck_assert_str_eq(tok, API_KEY);
    /* a key cannot be refreshed after a 401 */
    ck_assert_int_eq(cred_token(&c, true, &tok, &err), -1);
    ck_assert_int_eq(err.code, ST_UPSTREAM_AUTH);
    ck_assert_ptr_nonnull(strstr(err.text, "GEMINI_API_KEY"));
    assert_clean(&err);
    cred_release(&c);
    cred_release(&c); /* safe twice */

    /* GOOGLE_API_KEY next; an empty GEMINI_API_KEY is no key */
    e.v[2] = "";
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_GOOGLE_API_KEY);
    ck_assert_str_eq(cred_source_name(c.source), "GOOGLE_API_KEY");
    cred_release(&c);

    /* Vertex wants OAuth: the keys are skipped, ADC is next */
    o.oauth_only = true;
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_SERVICE_ACCOUNT);
    ck_assert_str_eq(cred_source_name(c.source), "service_account");
    ck_assert(cred_is_bearer(&c));
    ck_assert_str_eq(c.file, sa);
    ck_assert_str_eq(c.project_id, "test-project");
    cred_release(&c);
    free(sa);
}
END_TEST

START_TEST(adc_env_then_well_known_then_gcloud)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    char *sdk = path_in("sdk"), *home = path_in("home"), *gdir, *bin;
    char *well, *sa, *gcloud;

    ck_assert_int_eq(mkdir(sdk, 0700), 0);
    ck_assert_int_ge(asprintf(&gdir, "%s/.config", home), 0);
    ck_assert_int_eq(mkdir(home, 0700), 0);
    ck_assert_int_eq(mkdir(gdir, 0700), 0);
    free(gdir);
    ck_assert_int_ge(asprintf(&gdir, "%s/.config/gcloud", home), 0);
    ck_assert_int_eq(mkdir(gdir, 0700), 0);
    bin = path_in("bin");
    ck_assert_int_eq(mkdir(bin, 0700), 0);
    ck_assert_int_ge(asprintf(&gcloud, "%s/gcloud", bin), 0);
    write_file(gcloud, "#!/bin/sh\necho gcloud-token-1\n", 0755);

    ck_assert_int_ge(asprintf(&well, "%s/application_default_credentials.json",
                              sdk), 0);
    write_file(well, "{\"type\":\"authorized_user\",\"client_id\":\"a\","
                     "\"client_secret\":\"b\",\"refresh_token\":\"c\"}", 0600);
    sa = sa_file("sa.json", pem_a, "https://oauth2.googleapis.com/token");
    env_set(&e, "PATH", bin);
    env_set(&e, "HOME", home);
    env_set(&e, "CLOUDSDK_CONFIG", sdk);
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", sa);

    /* the named file first */
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_SERVICE_ACCOUNT);
    cred_release(&c);

    /* then $CLOUDSDK_CONFIG's well-known file */
    e.v[3] = "";
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_AUTHORIZED_USER);
    ck_assert_str_eq(cred_source_name(c.source), "authorized_user");
    ck_assert_str_eq(c.file, well);
    cred_release(&c);

    /* without CLOUDSDK_CONFIG: $HOME/.config/gcloud; nothing there, so
     * gcloud from $PATH */
    e.v[2] = NULL;
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_GCLOUD);
    ck_assert_str_eq(cred_source_name(c.source), "gcloud");
    ck_assert_str_eq(c.gcloud, gcloud);
    cred_release(&c);
    free(well);
    ck_assert_int_ge(asprintf(&well, "%s/application_default_credentials.json",
                              gdir), 0);
    write_file(well, "{\"type\":\"authorized_user\",\"client_id\":\"a\","
                     "\"client_secret\":\"b\",\"refresh_token\":\"c\"}", 0600);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_AUTHORIZED_USER);
    ck_assert_str_eq(c.file, well);
    cred_release(&c);
    unlink(well);

    /* no gcloud in $PATH: nothing at all */
    unlink(gcloud);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), -1);
    ck_assert_int_eq(err.code, ST_NOT_CONFIGURED);
    ck_assert_ptr_nonnull(strstr(err.text, "GOOGLE_APPLICATION_CREDENTIALS"));
    ck_assert_ptr_nonnull(strstr(err.text, "GEMINI_API_KEY"));
    ck_assert_int_eq(c.source, CRED_NONE);
    status_clear(&err);

    /* a named gcloud that is not there is an error of its own */
    env_set(&e, CRED_GCLOUD_ENV, gcloud);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.text, CRED_GCLOUD_ENV));
    status_clear(&err);

    free(sdk);
    free(home);
    free(gdir);
    free(bin);
    free(well);
    free(sa);
    free(gcloud);
}
END_TEST

/* --- files that cannot be used ------------------------------------------ */

/* Resolve with GOOGLE_APPLICATION_CREDENTIALS at a file holding `text`;
 * the error must be ST_CONFIG, mention `want`, and be clean. */
static void
bad_file(const char *text, const char *want)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    char *p = path_in("bad.json");

    write_file(p, text, 0600);
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_msg(strstr(err.text, want) != NULL, "%s: want \"%s\"",
                  err.text, want);
    ck_assert_ptr_nonnull(strstr(err.text, p)); /* the file is named */
    ck_assert_int_eq(c.source, CRED_NONE);
    assert_clean(&err);
    free(p);
}

START_TEST(unusable_files)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;

    /* cut short in the middle of a secret: where, never what */
    bad_file("{\"type\": \"authorized_user\", \"client_secret\": \""
             CLIENT_SECRET "\", \"refresh_token\": \"" REFRESH_TOKEN,
             "not valid JSON (line 1, column");
    bad_file("{\"type\": \"authorized_user\", \"refresh_token\": "
             REFRESH_TOKEN "}", "not valid JSON");
    bad_file("[1, 2]", "not a JSON object");
    bad_file("{\"type\": \"service_account\", \"client_email\": \"x@y\", "
             "\"private_key_id\": \"k\", \"token_uri\": "
             "\"https://oauth2.googleapis.com/token\"}",
             "private_key is missing");
    bad_file("{\"type\": \"authorized_user\", \"client_id\": \"a\", "
             "\"client_secret\": \"" CLIENT_SECRET "\"}",
             "refresh_token is missing");
    bad_file("{\"type\": \"authorized_user\", \"client_id\": \"a\", "
             "\"client_secret\": 7, \"refresh_token\": \"r\"}",
             "client_secret is missing");
    bad_file("{\"type\": \"external_account\"}",
             "type \"external_account\" is not supported");
    bad_file("{\"client_id\": \"a\"}", "type is missing");
    bad_file("{\"type\": \"service_account\", \"client_email\": \"x@y\", "
             "\"private_key_id\": \"k\", \"private_key\": \"p\", "
             "\"token_uri\": \"http://evil.example/token\"}",
             "token_uri must be an https:// URL");
    bad_file("{\"type\": \"service_account\", \"client_email\": \"x@y\", "
             "\"private_key_id\": \"k\", \"private_key\": \"p\", "
             "\"token_uri\": \"http://127.0.0.1.evil.example/token\"}",
             "token_uri must be an https:// URL");

    /* a file that is not there, and a folder */
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/adc.json");
    ck_assert_int_eq(cred_resolve(&o, &c, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.text, "No such file"));
    ck_assert_ptr_nonnull(strstr(err.text, "GOOGLE_APPLICATION_CREDENTIALS"));
    status_clear(&err);
    e.v[0] = dir;
    ck_assert_int_eq(cred_resolve(&o, &c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "not a regular file"));
    status_clear(&err);

    /* a key with spaces would break the header line */
    e.n = 0;
    env_set(&e, "GEMINI_API_KEY", "two words");
    ck_assert_int_eq(cred_resolve(&o, &c, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_ptr_null(strstr(err.text, "two words"));
}
END_TEST

START_TEST(private_key_unusable)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char *url = mock_url("/token");
    char *p = sa_file("sa.json",
                      "-----BEGIN PRIVATE KEY-----\nMIIBVwIBADANBgkqhkiG9w0B"
                      "\n-----END PRIVATE KEY-----\n",
                      url);

    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.text, "not a PEM RSA key"));
    ck_assert_ptr_null(tok);
    assert_clean(&err);
    cred_release(&c);
    free(p);
    free(url);
}
END_TEST

/* --- the service account's JWT ------------------------------------------ */

char *cred_jwt(const struct cred *c, time_t iat, struct status_error *err);

static unsigned char *
b64url_dec(const char *s, size_t n, size_t *out_len)
{
    char *std = calloc(1, n + 4);
    unsigned char *out = calloc(1, n + 4);
    size_t m = 0;
    int r;

    for (size_t i = 0; i < n; i++)
        std[m++] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
    while (m % 4 != 0)
        std[m++] = '=';
    r = EVP_DecodeBlock(out, (unsigned char *)std, (int)m);
    ck_assert_int_ge(r, 0);
    *out_len = (size_t)r - (n % 4 == 2 ? 2 : n % 4 == 3 ? 1 : 0);
    out[*out_len] = '\0';
    free(std);
    return out;
}

START_TEST(jwt_is_rs256_with_the_claims)
{
    struct cred c = {0};
    struct status_error err = {0};
    char *jwt, *dot1, *dot2;
    unsigned char *h, *cl, *sig;
    size_t hl, cll, sl;
    json_t *hj, *cj;
    EVP_MD_CTX *md = EVP_MD_CTX_new();

    c.source = CRED_SERVICE_ACCOUNT;
    c.secret = pem_a;
    c.email = UNCONST(SA_EMAIL);
    c.key_id = UNCONST(SA_KID);
    c.token_uri = UNCONST("https://oauth2.googleapis.com/token");
    jwt = cred_jwt(&c, 1700000000, &err);
    ck_assert_ptr_nonnull(jwt);
    ck_assert_ptr_null(strchr(jwt, '='));
    dot1 = strchr(jwt, '.');
    dot2 = strrchr(jwt, '.');
    ck_assert_ptr_ne(dot1, dot2);
    h = b64url_dec(jwt, (size_t)(dot1 - jwt), &hl);
    cl = b64url_dec(dot1 + 1, (size_t)(dot2 - dot1 - 1), &cll);
    sig = b64url_dec(dot2 + 1, strlen(dot2 + 1), &sl);
    hj = json_loads((char *)h, 0, NULL);
    cj = json_loads((char *)cl, 0, NULL);
    ck_assert_ptr_nonnull(hj);
    ck_assert_ptr_nonnull(cj);
    ck_assert_str_eq(json_string_value(json_object_get(hj, "alg")), "RS256");
    ck_assert_str_eq(json_string_value(json_object_get(hj, "typ")), "JWT");
    ck_assert_str_eq(json_string_value(json_object_get(hj, "kid")), SA_KID);
    ck_assert_str_eq(json_string_value(json_object_get(cj, "iss")), SA_EMAIL);
    ck_assert_str_eq(json_string_value(json_object_get(cj, "scope")),
                     "https://www.googleapis.com/auth/cloud-platform");
    ck_assert_str_eq(json_string_value(json_object_get(cj, "aud")),
                     "https://oauth2.googleapis.com/token");
    ck_assert_int_eq(json_integer_value(json_object_get(cj, "iat")),
                     1700000000);
    ck_assert_int_eq(json_integer_value(json_object_get(cj, "exp")),
                     1700000000 + 3600);
    ck_assert_uint_eq(json_object_size(cj), 5);
    /* and the signature verifies with the public key, here too */
    ck_assert_uint_eq(sl, 256);
    ck_assert_int_eq(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL,
                                          key_a),
                     1);
    ck_assert_int_eq(EVP_DigestVerify(md, sig, sl, (unsigned char *)jwt,
                                      (size_t)(dot2 - jwt)),
                     1);
    EVP_MD_CTX_free(md);
    json_decref(hj);
    json_decref(cj);
    free(h);
    free(cl);
    free(sig);
    free(jwt);
}
END_TEST

/* --- token flows against the mock --------------------------------------- */

START_TEST(service_account_token_cached_refreshed)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char first[64], *url = mock_url("/token"), *p;

    p = sa_file("sa.json", pem_a, url);
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_msg(cred_token(&c, false, &tok, &err) == 0, "%s", err.text);
    ck_assert_msg(strncmp(tok, "sa-token-", 9) == 0, "token %s", tok);
    snprintf(first, sizeof(first), "%s", tok);

    /* cached until 60 s before its hour is up */
    fake_time += 3600 - CRED_REFRESH_MARGIN_S - 1;
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), 0);
    ck_assert_str_eq(tok, first);
    /* then fetched again: a new assertion, a new token */
    fake_time += 2;
    ck_assert_msg(cred_token(&c, false, &tok, &err) == 0, "%s", err.text);
    ck_assert_str_ne(tok, first);
    snprintf(first, sizeof(first), "%s", tok);
    /* a 401: forced */
    ck_assert_msg(cred_token(&c, true, &tok, &err) == 0, "%s", err.text);
    ck_assert_str_ne(tok, first);
    ck_assert_int_eq(strncmp(tok, "sa-token-", 9), 0);
    cred_release(&c);
    free(p);
    free(url);
}
END_TEST

START_TEST(service_account_short_lived_token)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char first[64], *url = mock_url("/token/short"), *p;

    /* expires_in 30: already inside the margin, so never reused */
    p = sa_file("sa.json", pem_a, url);
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_msg(cred_token(&c, false, &tok, &err) == 0, "%s", err.text);
    snprintf(first, sizeof(first), "%s", tok);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), 0);
    ck_assert_str_ne(tok, first);
    cred_release(&c);
    free(p);
    free(url);
}
END_TEST

START_TEST(service_account_wrong_key_refused)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char *url = mock_url("/token"), *p;

    /* signed with a key the endpoint does not know: the mock checks */
    p = sa_file("sa.json", pem_b, url);
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_ptr_null(tok);
    ck_assert_int_eq(err.code, ST_UPSTREAM_AUTH);
    ck_assert_str_eq(err.text, "service_account: the token endpoint "
                               "answered 400 (invalid_grant)");
    assert_clean(&err);
    cred_release(&c);
    free(p);
    free(url);
}
END_TEST

START_TEST(authorized_user_refresh)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char first[64], *url = mock_url("/token"), *p = au_file("au.json",
                                                            REFRESH_TOKEN);

    o.token_url = url;
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(c.source, CRED_AUTHORIZED_USER);
    ck_assert_str_eq(c.quota_project_id, "quota-p");
    ck_assert_msg(cred_token(&c, false, &tok, &err) == 0, "%s", err.text);
    ck_assert_int_eq(strncmp(tok, "au-token-", 9), 0);
    snprintf(first, sizeof(first), "%s", tok);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), 0);
    ck_assert_str_eq(tok, first);
    ck_assert_msg(cred_token(&c, true, &tok, &err) == 0, "%s", err.text);
    ck_assert_str_ne(tok, first);
    cred_release(&c);
    free(p);

    /* a revoked refresh token: the OAuth code, never the description
     * (which echoes the secrets) */
    p = au_file("au.json", "revoked");
    e.v[0] = p;
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_int_eq(err.code, ST_UPSTREAM_AUTH);
    ck_assert_str_eq(err.text, "authorized_user: the token endpoint "
                               "answered 400 (invalid_grant)");
    assert_clean(&err);
    ck_assert_ptr_null(strstr(err.text, "revoked"));
    cred_release(&c);
    free(p);
    free(url);
}
END_TEST

/* The token endpoint at `path` answers badly: `code`, and `want` said. */
static void
bad_endpoint(const char *path, enum status code, const char *want)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char *url = mock_url(path), *p = au_file("au.json", REFRESH_TOKEN);

    o.token_url = url;
    o.timeout_ms = 3000;
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_int_eq(err.code, code);
    ck_assert_msg(strstr(err.text, want) != NULL, "%s: want \"%s\"",
                  err.text, want);
    assert_clean(&err);
    cred_release(&c);
    free(p);
    free(url);
}

START_TEST(token_endpoint_failures)
{
    bad_endpoint("/token/garbage", ST_UPSTREAM_BAD, "not a JSON object");
    bad_endpoint("/token/notoken", ST_UPSTREAM_BAD, "has no access_token");
    bad_endpoint("/token/badtoken", ST_UPSTREAM_BAD,
                 "not a usable header value");
    bad_endpoint("/token/unavailable", ST_UPSTREAM_DOWN, "answered 503");
    bad_endpoint("/nowhere", ST_UPSTREAM_BAD, "answered 404 (not_found)");
}
END_TEST

START_TEST(token_endpoint_unreachable)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char *p = au_file("au.json", REFRESH_TOKEN);

    /* port 1 on loopback: nobody listens */
    o.token_url = "http://127.0.0.1:1/token";
    env_set(&e, "GOOGLE_APPLICATION_CREDENTIALS", p);
    ck_assert_int_eq(cred_resolve(&o, &c, &err), 0);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_int_eq(err.code, ST_UPSTREAM_DOWN);
    ck_assert_ptr_nonnull(strstr(err.text, "cannot be reached"));
    assert_clean(&err);
    cred_release(&c);
    free(p);
}
END_TEST

/* --- gcloud -------------------------------------------------------------- */

/* Resolve to the gcloud script `body` (named through the environment). */
static void
gcloud_cred(const char *body, struct env *e, struct cred_opts *o,
            struct cred *c)
{
    struct status_error err = {0};
    char *script = path_in("fake-gcloud"), *text;

    ck_assert_int_ge(asprintf(&text, "#!/bin/sh\n%s\n", body), 0);
    write_file(script, text, 0755);
    free(text);
    env_set(e, "PATH", "/nonexistent");
    env_set(e, "HOME", "/nonexistent");
    env_set(e, CRED_GCLOUD_ENV, script);
    ck_assert_msg(cred_resolve(o, c, &err) == 0, "%s", err.text);
    ck_assert_int_eq(c->source, CRED_GCLOUD);
    free(script);
}

START_TEST(gcloud_token)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char *count = path_in("count"), body[512];

    /* only `auth print-access-token`, counted; white space trimmed */
    snprintf(body, sizeof(body),
             "[ \"$#\" = 2 ] && [ \"$1\" = auth ] && "
             "[ \"$2\" = print-access-token ] || exit 3\n"
             "echo x >> '%s'\n"
             "echo 'oops on stderr' >&2\n"
             "printf '  gcloud-token-%%s\\n\\n' $(wc -l < '%s')",
             count, count);
    gcloud_cred(body, &e, &o, &c);
    ck_assert(cred_is_bearer(&c));
    ck_assert_msg(cred_token(&c, false, &tok, &err) == 0, "%s", err.text);
    ck_assert_str_eq(tok, "gcloud-token-1");
    /* cached for CRED_GCLOUD_CACHE_S, then asked again */
    fake_time += CRED_GCLOUD_CACHE_S - CRED_REFRESH_MARGIN_S - 1;
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), 0);
    ck_assert_str_eq(tok, "gcloud-token-1");
    fake_time += 2;
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), 0);
    ck_assert_str_eq(tok, "gcloud-token-2");
    ck_assert_int_eq(cred_token(&c, true, &tok, &err), 0);
    ck_assert_str_eq(tok, "gcloud-token-3");
    cred_release(&c);
    free(count);
}
END_TEST

/* The whole of file `path`, a new string. */
static char *
file_text(const char *path)
{
    FILE *f = fopen(path, "r");
    char *t = calloc(1, 65537);
    size_t n;

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(t);
    n = fread(t, 1, 65536, f);
    t[n] = '\0';
    fclose(f);
    return t;
}

/* gcloud gets its own settings and no key (core/credenv.h):
 * the script writes the environment it was given. */
START_TEST(gcloud_environment)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    char *dump = path_in("gcloud-env"), body[512], *got;

    /* the real environment, which the child inherits (the suite forks) */
    ck_assert_int_eq(setenv("GEMINI_API_KEY", "canary-gemini-key-24", 1), 0);
    ck_assert_int_eq(setenv("GOOGLE_API_KEY", "canary-google-key-24", 1), 0);
    ck_assert_int_eq(setenv("GOOGLE_APPLICATION_CREDENTIALS",
                            "/canary/adc-24.json", 1), 0);
    ck_assert_int_eq(setenv("CLOUDSDK_CONFIG", "/canary/gcloud-24", 1), 0);
    unsetenv("GEMINI_AGENT_PASS_ENV");
    snprintf(body, sizeof(body), "env > '%s'\necho gcloud-token-env", dump);
    gcloud_cred(body, &e, &o, &c);
    ck_assert_msg(cred_token(&c, false, &tok, &err) == 0, "%s", err.text);
    ck_assert_str_eq(tok, "gcloud-token-env");
    got = file_text(dump);
    ck_assert_ptr_null(strstr(got, "canary-gemini-key-24"));
    ck_assert_ptr_null(strstr(got, "canary-google-key-24"));
    ck_assert_ptr_null(strstr(got, "/canary/adc-24.json"));
    ck_assert_ptr_nonnull(strstr(got, "CLOUDSDK_CONFIG=/canary/gcloud-24"));
    free(got);
    cred_release(&c);
    free(dump);
}
END_TEST

START_TEST(gcloud_failures)
{
    struct env e = {0};
    struct cred_opts o = opts_for(&e);
    struct status_error err = {0};
    struct cred c;
    const char *tok;
    struct timespec t0, t1;
    long ms;

    /* a failure: the exit status, never its stderr or stdout */
    gcloud_cred("echo 'gcloud-token-leak'; echo " REFRESH_TOKEN " >&2; exit 1",
                &e, &o, &c);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_int_eq(err.code, ST_UPSTREAM_AUTH);
    ck_assert_ptr_nonnull(strstr(err.text, "exit status 1"));
    assert_clean(&err);
    cred_release(&c);
    status_clear(&err);

    /* nothing printed */
    e.n = 0;
    gcloud_cred("exit 0", &e, &o, &c);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_int_eq(err.code, ST_UPSTREAM_BAD);
    ck_assert_ptr_nonnull(strstr(err.text, "printed no token"));
    cred_release(&c);
    status_clear(&err);

    /* two words are no token */
    e.n = 0;
    gcloud_cred("echo 'gcloud-token-a gcloud-token-b'", &e, &o, &c);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    ck_assert_int_eq(err.code, ST_UPSTREAM_BAD);
    assert_clean(&err);
    cred_release(&c);
    status_clear(&err);

    /* a gcloud that hangs (with a child holding stdout) is killed at the
     * deadline, its process group with it, and reaped */
    e.n = 0;
    o.gcloud_timeout_ms = 300;
    gcloud_cred("sleep 30 & sleep 30", &e, &o, &c);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(cred_token(&c, false, &tok, &err), -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    ck_assert_int_eq(err.code, ST_UPSTREAM_TIMEOUT);
    ck_assert_int_lt(ms, 3000);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1); /* no child left */
    ck_assert_int_eq(errno, ECHILD);
    cred_release(&c);
}
END_TEST

/* --- Vertex AI's URLs ---------------------------------------------------- */

START_TEST(vertex_urls)
{
    struct arena a;
    struct status_error err = {0};
    const char *u;

    arena_init(&a);
    u = vertex_url(&a, NULL, "my-proj", "global", "gemini-3.5-flash", false,
                   &err);
    ck_assert_str_eq(u, "https://aiplatform.googleapis.com/v1/projects/"
                        "my-proj/locations/global/publishers/google/models/"
                        "gemini-3.5-flash:generateContent");
    u = vertex_url(&a, NULL, "my-proj", "us-central1", "gemini-3.5-flash",
                   true, &err);
    ck_assert_str_eq(u, "https://us-central1-aiplatform.googleapis.com/v1/"
                        "projects/my-proj/locations/us-central1/publishers/"
                        "google/models/gemini-3.5-flash:"
                        "streamGenerateContent?alt=sse");
    u = vertex_url(&a, NULL, "p", "eu", "m", false, &err);
    ck_assert_str_eq(u, "https://aiplatform.eu.rep.googleapis.com/v1/"
                        "projects/p/locations/eu/publishers/google/models/"
                        "m:generateContent");
    /* GEMINI_BASE_URL: the mock, slashes at the end or not */
    u = vertex_url(&a, "http://127.0.0.1:8080//", "p", "global", "m", true,
                   &err);
    ck_assert_str_eq(u, "http://127.0.0.1:8080/v1/projects/p/locations/"
                        "global/publishers/google/models/m:"
                        "streamGenerateContent?alt=sse");
    ck_assert_int_eq(err.code, ST_OK);
    /* each part one segment; the location a host label */
    ck_assert_ptr_null(vertex_url(&a, NULL, "p/../q", "global", "m", false,
                                  &err));
    ck_assert_int_eq(err.code, ST_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.text, "project"));
    status_clear(&err);
    ck_assert_ptr_null(vertex_url(&a, NULL, "p", "evil.com#", "m", false,
                                  &err));
    ck_assert_ptr_nonnull(strstr(err.text, "location"));
    status_clear(&err);
    ck_assert_ptr_null(vertex_url(&a, NULL, "p", "US-central1", "m", false,
                                  &err));
    status_clear(&err);
    ck_assert_ptr_null(vertex_url(&a, NULL, "p", "global", "", false, &err));
    ck_assert_ptr_nonnull(strstr(err.text, "model"));
    status_clear(&err);
    ck_assert_ptr_null(vertex_url(&a, NULL, "p", "global", "..", false,
                                  &err));
    arena_release(&a);
}
END_TEST

/* --- the transport's header --------------------------------------------- */

/* POST through the libcurl transport to the mock's /echo, and return the
 * headers it saw (a new reference). */
static json_t *
echo_headers(enum gemini_auth auth, const char *secret)
{
    struct gemini g;
    struct gemini_http h = {0};
    char *url = mock_url("/echo");
    json_t *j, *hdrs;

    ck_assert_int_eq(gemini_init(&g), 0);
    ck_assert_int_eq(g.auth, GEMINI_AUTH_KEY); /* the serve default */
    g.auth = auth;
    sbuf_init(&h.body, 65536);
    ck_assert_int_eq(g.t.post(g.t.ctx, url, secret, "{}", 2, 5000, &h), 0);
    ck_assert_int_eq(h.net, GEMINI_NET_OK);
    ck_assert_int_eq(h.status, 200);
    ck_assert_ptr_null(g.headers); /* wiped and freed after the call */
    j = json_loads(h.body.buf, 0, NULL);
    ck_assert_ptr_nonnull(j);
    hdrs = json_incref(json_object_get(j, "headers"));
    json_decref(j);
    sbuf_release(&h.body);
    gemini_release(&g);
    free(url);
    return hdrs;
}

START_TEST(transport_key_or_bearer)
{
    json_t *h;

    h = echo_headers(GEMINI_AUTH_KEY, API_KEY);
    ck_assert_str_eq(json_string_value(json_object_get(h, "x-goog-api-key")),
                     API_KEY);
    ck_assert_ptr_null(json_object_get(h, "authorization"));
    json_decref(h);

    h = echo_headers(GEMINI_AUTH_BEARER, "ya29.test-token");
    ck_assert_str_eq(json_string_value(json_object_get(h, "authorization")),
                     "Bearer ya29.test-token");
    ck_assert_ptr_null(json_object_get(h, "x-goog-api-key"));
    ck_assert_str_eq(json_string_value(json_object_get(h, "content-type")),
                     "application/json");
    json_decref(h);
}
END_TEST

Suite *
credentials_suite(void)
{
    Suite *s = suite_create("credentials");
    TCase *order = tcase_create("order");
    TCase *token = tcase_create("token");
    TCase *gcloud = tcase_create("gcloud");
    TCase *vertex = tcase_create("vertex");

    /* one key pair and one mock for each case that needs them */
    tcase_add_unchecked_fixture(order, world_setup, world_teardown);
    tcase_add_test(order, api_key_wins);
    tcase_add_test(order, adc_env_then_well_known_then_gcloud);
    tcase_add_test(order, unusable_files);
    suite_add_tcase(s, order);

    tcase_add_unchecked_fixture(token, world_setup, world_teardown);
    tcase_set_timeout(token, 60);
    tcase_add_test(token, jwt_is_rs256_with_the_claims);
    tcase_add_test(token, private_key_unusable);
    tcase_add_test(token, service_account_token_cached_refreshed);
    tcase_add_test(token, service_account_short_lived_token);
    tcase_add_test(token, service_account_wrong_key_refused);
    tcase_add_test(token, authorized_user_refresh);
    tcase_add_test(token, token_endpoint_failures);
    tcase_add_test(token, token_endpoint_unreachable);
    tcase_add_test(token, transport_key_or_bearer);
    suite_add_tcase(s, token);

    tcase_add_unchecked_fixture(gcloud, world_setup, world_teardown);
    tcase_add_test(gcloud, gcloud_token);
    tcase_add_test(gcloud, gcloud_environment);
    tcase_add_test(gcloud, gcloud_failures);
    suite_add_tcase(s, gcloud);

    tcase_add_test(vertex, vertex_urls);
    suite_add_tcase(s, vertex);
    return s;
}

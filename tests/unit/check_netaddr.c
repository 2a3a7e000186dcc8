/*
 * check_netaddr.c - addresses and networks: what is read, what is
 * refused, what matches what, and how they are written back.
 *
 * SPDX-License-Identifier: MIT
 */
#include "core/common.h"
#include "core/netaddr.h"

#include <check.h>
#include <string.h>

static struct netaddr
parsed(const char *s)
{
    struct netaddr a;

    ck_assert_msg(netaddr_parse(s, strlen(s), &a), "'%s' is refused", s);
    return a;
}

static void
assert_text(const char *in, const char *want)
{
    struct netaddr a = parsed(in);
    char out[NETADDR_TEXT_MAX];

    netaddr_format(&a, out);
    ck_assert_str_eq(out, want);
}

START_TEST(parse_and_format)
{
    assert_text("127.0.0.1", "127.0.0.1");
    assert_text("::1", "::1");
    assert_text("2001:DB8:0:0:0:0:0:1", "2001:db8::1");
    /* an IPv4-mapped address is the IPv4 address */
    assert_text("::ffff:192.0.2.7", "192.0.2.7");
    /* networks, with the bits past the prefix cleared */
    assert_text("10.1.2.3/8", "10.0.0.0/8");
    assert_text("10.0.0.0/32", "10.0.0.0");
    assert_text("0.0.0.0/0", "0.0.0.0/0");
    assert_text("2001:db8:1:2:3::/64", "2001:db8:1:2::/64");
    assert_text("::/0", "::/0");
    ck_assert(netaddr_is_v4(&(struct netaddr){0}) == false);
    {
        struct netaddr a = parsed("192.0.2.1");
        ck_assert(netaddr_is_v4(&a));
        a = parsed("2001:db8::1");
        ck_assert(!netaddr_is_v4(&a));
    }
}
END_TEST

START_TEST(refused)
{
    static const char *const bad[] = {
        "",          "1.2.3",          "1.2.3.4.5",     "256.1.1.1",
        " 1.2.3.4",  "1.2.3.4 ",       "1.2.3.4/",      "1.2.3.4/33",
        "1.2.3.4/08", "1.2.3.4/-1",    "1.2.3.4/+8",    "::1/129",
        "fe80::1%eth0", "example.com", "1.2.3.4/8/8",   "::g",
        "01.2.3.4",  "1.2.3.4, 5.6.7.8",
    };
    struct netaddr a;

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        ck_assert_msg(!netaddr_parse(bad[i], strlen(bad[i]), &a),
                      "'%s' is accepted", bad[i]);
        ck_assert_uint_eq(a.bits, 0);
    }
    /* a NUL inside the given length is not text */
    ck_assert(!netaddr_parse("1.2.3.4\0x", 9, &a));
    /* only the given length is read */
    ck_assert(netaddr_parse("1.2.3.4, 5.6.7.8", 7, &a));
}
END_TEST

START_TEST(matching)
{
    struct netaddr list[3];
    struct netaddr a;

    list[0] = parsed("10.0.0.0/8");
    list[1] = parsed("2001:db8::/32");
    list[2] = parsed("127.0.0.1");
    a = parsed("10.200.3.4");
    ck_assert(netaddr_match(&list[0], &a));
    ck_assert(netaddr_in(list, 3, &a));
    a = parsed("11.0.0.1");
    ck_assert(!netaddr_in(list, 3, &a));
    a = parsed("::ffff:127.0.0.1");
    ck_assert(netaddr_in(list, 3, &a));
    a = parsed("127.0.0.2");
    ck_assert(!netaddr_in(list, 3, &a));
    a = parsed("2001:db8:ffff::1");
    ck_assert(netaddr_in(list, 3, &a));
    /* an IPv6 address never matches an IPv4 network, nor the reverse */
    a = parsed("::a00:1"); /* ::10.0.0.1, not mapped */
    ck_assert(!netaddr_match(&list[0], &a));
    list[0] = parsed("0.0.0.0/0");
    a = parsed("2001:db8::1");
    ck_assert(!netaddr_match(&list[0], &a));
    a = parsed("203.0.113.9");
    ck_assert(netaddr_match(&list[0], &a));
    /* a network is inside a wider one, not a narrower one */
    a = parsed("10.1.0.0/16");
    list[0] = parsed("10.0.0.0/8");
    ck_assert(netaddr_match(&list[0], &a));
    ck_assert(!netaddr_match(&a, &list[0]));
    ck_assert(!netaddr_in(list, 0, &a));
}
END_TEST

START_TEST(masking)
{
    struct netaddr a = parsed("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    char out[NETADDR_TEXT_MAX];

    /* an IPv6 client counts by its /64: one host has all of them */
    netaddr_mask(&a, 64);
    netaddr_format(&a, out);
    ck_assert_str_eq(out, "2001:db8:1:2::/64");
    /* never wider than it was */
    netaddr_mask(&a, 100);
    ck_assert_uint_eq(a.bits, 64);
    a = parsed("192.0.2.255");
    netaddr_mask(&a, 96 + 24);
    netaddr_format(&a, out);
    ck_assert_str_eq(out, "192.0.2.0/24");
    netaddr_mask(&a, 0);
    ck_assert_uint_eq(a.bits, 0);
    for (size_t i = 0; i < sizeof(a.b); i++)
        ck_assert_uint_eq(a.b[i], 0);
}
END_TEST

Suite *
netaddr_suite(void)
{
    Suite *s = suite_create("netaddr");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, parse_and_format);
    tcase_add_test(tc, refused);
    tcase_add_test(tc, matching);
    tcase_add_test(tc, masking);
    suite_add_tcase(s, tc);
    return s;
}

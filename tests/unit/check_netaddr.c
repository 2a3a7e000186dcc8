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

/* Each special-purpose range at its edges, in both families and in the
 * IPv6 forms that carry an IPv4 address; public neighbours pass. */
START_TEST(reserved_ranges)
{
    static const struct {
        const char *addr;
        const char *kind; /* NULL: public */
    } cases[] = {
        {"0.0.0.0", "unspecified"},      {"0.255.255.255", "unspecified"},
        {"1.0.0.0", NULL},               {"9.255.255.255", NULL},
        {"10.0.0.0", "private"},         {"10.255.255.255", "private"},
        {"11.0.0.0", NULL},              {"100.63.255.255", NULL},
        {"100.64.0.0", "shared"},        {"100.127.255.255", "shared"},
        {"100.128.0.0", NULL},           {"126.255.255.255", NULL},
        {"127.0.0.1", "loopback"},       {"127.255.255.254", "loopback"},
        {"128.0.0.0", NULL},             {"169.253.255.255", NULL},
        {"169.254.0.1", "link-local"},   {"169.254.169.254", "link-local"},
        {"169.255.0.0", NULL},           {"172.15.255.255", NULL},
        {"172.16.0.0", "private"},       {"172.31.255.255", "private"},
        {"172.32.0.0", NULL},            {"192.0.0.8", "reserved"},
        {"192.0.1.1", NULL},             {"192.0.2.1", "documentation"},
        {"192.88.99.1", "reserved"},     {"192.167.255.255", NULL},
        {"192.168.0.1", "private"},      {"192.168.255.255", "private"},
        {"192.169.0.0", NULL},           {"198.17.255.255", NULL},
        {"198.18.0.1", "reserved"},      {"198.19.255.255", "reserved"},
        {"198.20.0.0", NULL},            {"198.51.100.7", "documentation"},
        {"203.0.113.7", "documentation"}, {"223.255.255.255", NULL},
        {"224.0.0.1", "multicast"},      {"239.255.255.255", "multicast"},
        {"240.0.0.1", "reserved"},       {"255.255.255.254", "reserved"},
        {"255.255.255.255", "broadcast"}, {"8.8.8.8", NULL},
        /* IPv6 */
        {"::", "unspecified"},           {"::1", "loopback"},
        {"::2", "reserved"},             {"::127.0.0.1", "reserved"},
        {"::8.8.8.8", "reserved"},       {"100::1", "reserved"},
        {"2001:db8::1", "documentation"}, {"2001::1", "reserved"},
        {"2001:1ff:ffff::1", "reserved"}, {"2001:200::1", NULL},
        {"2606:4700::1111", NULL},       {"3fff:ffff::1", NULL},
        {"4000::1", "reserved"},         {"1fff::1", "reserved"},
        {"fc00::1", "private"},          {"fdff:ffff::1", "private"},
        {"fec0::1", "private"},          {"fe80::1", "link-local"},
        {"febf:ffff::1", "link-local"},  {"ff02::1", "multicast"},
        {"ff0e::1", "multicast"},
        /* mapped: the IPv4 address */
        {"::ffff:127.0.0.1", "loopback"}, {"::ffff:169.254.169.254", "link-local"},
        {"::ffff:10.1.2.3", "private"},  {"::ffff:8.8.8.8", NULL},
        /* NAT64: the IPv4 address inside; its local-use range reserved */
        {"64:ff9b::127.0.0.1", "loopback"}, {"64:ff9b::a9fe:a9fe", "link-local"},
        {"64:ff9b::192.168.1.1", "private"}, {"64:ff9b::8.8.8.8", NULL},
        {"64:ff9b:1::8.8.8.8", "reserved"},
        /* 6to4: the IPv4 address in bits 16..47 */
        {"2002:7f00:1::1", "loopback"},  {"2002:a00:1::1", "private"},
        {"2002:808:808::1", NULL},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct netaddr a = parsed(cases[i].addr);
        const char *got = netaddr_reserved(&a);
        if (cases[i].kind == NULL)
            ck_assert_msg(got == NULL, "%s is %s, not public", cases[i].addr,
                          got);
        else
            ck_assert_msg(got != NULL && strcmp(got, cases[i].kind) == 0,
                          "%s is %s, not %s", cases[i].addr,
                          got ? got : "public", cases[i].kind);
    }
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
    tcase_add_test(tc, reserved_ranges);
    suite_add_tcase(s, tc);
    return s;
}

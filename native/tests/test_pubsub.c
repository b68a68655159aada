/* test_pubsub.c — exec/pubsub's registry against a reference model: random subscribes,
 * unsubscribes (one, all of a space, forget) and publishes over a few subscribers, names and
 * patterns; after every step each subscriber's counts, every name's subscriber count and
 * every PUBLISH's receivers and deliveries must equal the model's (a plain table of who is
 * subscribed to what). Links core and exec/pubsub.c only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/glob.h"
#include "exec/pubsub.h"
#include "tests/test_helpers.h"

#define SUBSCRIBERS 6
#define NAMES 24

static const char *names[NAMES];
static char name_text[NAMES][16];

/* model: subscribed[space][subscriber][name] */
static int subscribed[GR_PUBSUB_SPACES][SUBSCRIBERS][NAMES];

typedef struct recorder {
    gr_subscriber_t base;
    int index;
    int64_t deliveries;
    int refuse_after;          /* > 0: over its limit after this many deliveries */
    char last_channel[32], last_pattern[32];
    int last_kind;
} recorder_t;

static recorder_t subscribers[SUBSCRIBERS];

static int record(gr_subscriber_t *s, gr_pubsub_kind_t kind, gr_bytes_t pattern, gr_bytes_t channel, gr_bytes_t payload) {
    recorder_t *r = (recorder_t *)s;
    (void)payload;
    r->deliveries++;
    r->last_kind = (int)kind;
    snprintf(r->last_channel, sizeof r->last_channel, "%.*s", (int)channel.length, (const char *)channel.data);
    snprintf(r->last_pattern, sizeof r->last_pattern, "%.*s", (int)pattern.length, (const char *)pattern.data);
    return r->refuse_after > 0 && r->deliveries >= r->refuse_after ? GR_PUBSUB_OVER_LIMIT : GR_PUBSUB_ACCEPTED;
}

static gr_bytes_t name_bytes(int i) { return (gr_bytes_t){(const uint8_t *)names[i], (uint32_t)strlen(names[i])}; }

static void check_state(gr_pubsub_t *p, const char *step) {
    for (int space = 0; space < GR_PUBSUB_SPACES; space++) {
        size_t active = 0;
        for (int n = 0; n < NAMES; n++) {
            size_t want = 0;
            for (int s = 0; s < SUBSCRIBERS; s++) want += (size_t)subscribed[space][s][n];
            active += want > 0;
            size_t got = gr_pubsub_subscriber_count(p, space, name_bytes(n));
            CHECK(got == want, "%s: space %d name %s has %zu subscribers, model %zu", step, space, names[n], got, want);
        }
        CHECK(gr_pubsub_name_count(p, space) == active, "%s: space %d has %zu names, model %zu", step, space,
              gr_pubsub_name_count(p, space), active);
        for (int s = 0; s < SUBSCRIBERS; s++) {
            uint32_t want = 0;
            for (int n = 0; n < NAMES; n++) want += (uint32_t)subscribed[space][s][n];
            CHECK(subscribers[s].base.counts[space] == want, "%s: subscriber %d space %d count %u, model %u", step, s,
                  space, subscribers[s].base.counts[space], want);
        }
    }
}

static void check_publish(gr_pubsub_t *p, int channel, int shard) {
    int64_t before[SUBSCRIBERS], want[SUBSCRIBERS] = {0}, total = 0;
    for (int s = 0; s < SUBSCRIBERS; s++) before[s] = subscribers[s].deliveries;
    gr_bytes_t payload = {(const uint8_t *)"payload", 7};
    int64_t receivers;
    if (shard) {
        for (int s = 0; s < SUBSCRIBERS; s++) want[s] += subscribed[GR_PUBSUB_SHARD_CHANNELS][s][channel];
        receivers = gr_pubsub_spublish(p, name_bytes(channel), payload);
    } else {
        for (int s = 0; s < SUBSCRIBERS; s++) {
            want[s] += subscribed[GR_PUBSUB_CHANNELS][s][channel];
            for (int n = 0; n < NAMES; n++)
                if (subscribed[GR_PUBSUB_PATTERNS][s][n] &&
                    (names[channel][0] ? gr_glob_match((const uint8_t *)names[n], strlen(names[n]),
                                                       (const uint8_t *)names[channel], strlen(names[channel]), 0)
                                       : names[n][0] == '\0'))   /* Redis: "" matches only "" */
                    want[s]++;
        }
        receivers = gr_pubsub_publish(p, name_bytes(channel), payload);
    }
    for (int s = 0; s < SUBSCRIBERS; s++) total += want[s];
    CHECK(receivers == total, "publish %s (shard %d): %lld receivers, model %lld", names[channel], shard,
          (long long)receivers, (long long)total);
    for (int s = 0; s < SUBSCRIBERS; s++)
        CHECK(subscribers[s].deliveries - before[s] == want[s], "publish %s: subscriber %d got %lld, model %lld",
              names[channel], s, (long long)(subscribers[s].deliveries - before[s]), (long long)want[s]);
}

static int each_calls;
static void count_each(void *context, gr_bytes_t name) {
    (void)context, (void)name;
    each_calls++;
}

static void test_random_operations_agree_with_the_model(void) {
    gr_pubsub_t *p = gr_pubsub_new(7);
    CHECK(p != NULL, "new");
    for (int s = 0; s < SUBSCRIBERS; s++) {
        memset(&subscribers[s], 0, sizeof subscribers[s]);
        subscribers[s].base.owner = &subscribers[s];
        subscribers[s].base.deliver = record;
        subscribers[s].index = s;
    }
    memset(subscribed, 0, sizeof subscribed);
    for (int step = 0; step < 40000; step++) {
        int s = (int)below(SUBSCRIBERS), n = (int)below(NAMES), space = (int)below(GR_PUBSUB_SPACES);
        gr_subscriber_t *sub = &subscribers[s].base;
        size_t op = below(100);
        if (op < 45) {
            int rc = gr_pubsub_subscribe(p, sub, space, name_bytes(n));
            CHECK(rc == !subscribed[space][s][n], "subscribe %d %d %s -> %d", s, space, names[n], rc);
            subscribed[space][s][n] = 1;
        } else if (op < 75) {
            int rc = gr_pubsub_unsubscribe(p, sub, space, name_bytes(n));
            CHECK(rc == subscribed[space][s][n], "unsubscribe %d %d %s -> %d", s, space, names[n], rc);
            subscribed[space][s][n] = 0;
        } else if (op < 77) {
            each_calls = 0;
            uint32_t had = sub->counts[space];
            gr_pubsub_unsubscribe_all(p, sub, space, count_each, NULL);
            CHECK(each_calls == (int)had, "unsubscribe_all called back %d times for %u", each_calls, had);
            for (int k = 0; k < NAMES; k++) subscribed[space][s][k] = 0;
        } else if (op < 78) {
            gr_pubsub_forget(p, sub);
            for (int sp = 0; sp < GR_PUBSUB_SPACES; sp++)
                for (int k = 0; k < NAMES; k++) subscribed[sp][s][k] = 0;
        } else {
            check_publish(p, n, op < 85);
        }
        if ((step & 255) == 0 || op >= 75) check_state(p, "random step");
    }
    check_state(p, "end");
    for (int s = 0; s < SUBSCRIBERS; s++) gr_pubsub_forget(p, &subscribers[s].base);
    for (int space = 0; space < GR_PUBSUB_SPACES; space++)
        CHECK(gr_pubsub_name_count(p, space) == 0, "space %d not empty after every subscriber left", space);
    gr_pubsub_free(p);
}

static void test_a_subscriber_over_its_limit_gets_nothing_more_but_still_counts(void) {
    gr_pubsub_t *p = gr_pubsub_new(1);
    recorder_t r = {0};
    r.base.deliver = record;
    r.refuse_after = 2;
    gr_bytes_t ch = {(const uint8_t *)"c", 1}, pat = {(const uint8_t *)"c*", 2}, payload = {(const uint8_t *)"x", 1};
    CHECK(gr_pubsub_subscribe(p, &r.base, GR_PUBSUB_CHANNELS, ch) == 1, "subscribe");
    CHECK(gr_pubsub_subscribe(p, &r.base, GR_PUBSUB_PATTERNS, pat) == 1, "psubscribe");
    CHECK(gr_pubsub_publish(p, ch, payload) == 2, "both subscriptions count");
    CHECK(r.deliveries == 2 && r.base.over_limit, "over its limit after the second: %lld", (long long)r.deliveries);
    CHECK(r.last_kind == GR_PUBSUB_PMESSAGE && !strcmp(r.last_pattern, "c*") && !strcmp(r.last_channel, "c"),
          "the pattern delivery names pattern and channel");
    CHECK(gr_pubsub_publish(p, ch, payload) == 2 && r.deliveries == 2, "nothing more is delivered");
    gr_pubsub_forget(p, &r.base);
    CHECK(!r.base.over_limit && gr_subscriber_total(&r.base) == 0, "forget clears it");
    gr_pubsub_free(p);
}

static void test_an_empty_channel_matches_only_an_empty_pattern(void) {
    gr_pubsub_t *p = gr_pubsub_new(1);
    recorder_t r = {0};
    r.base.deliver = record;
    gr_bytes_t star = {(const uint8_t *)"*", 1}, empty = {(const uint8_t *)"", 0}, payload = {(const uint8_t *)"x", 1};
    gr_pubsub_subscribe(p, &r.base, GR_PUBSUB_PATTERNS, star);
    CHECK(gr_pubsub_publish(p, empty, payload) == 0, "\"*\" does not match the empty channel (Redis)");
    gr_pubsub_subscribe(p, &r.base, GR_PUBSUB_PATTERNS, empty);
    CHECK(gr_pubsub_publish(p, empty, payload) == 1, "the empty pattern does");
    gr_pubsub_forget(p, &r.base);
    gr_pubsub_free(p);
}

int main(void) {
    static const char *const base[] = {"news", "news.sport", "news.tech", "n*", "news.*", "h?llo", "hello", "hallo",
                                       "h[ae]llo", "*", "x", "y", "", "a[b", "a\\*", "a*"};
    for (int i = 0; i < NAMES; i++) {
        if (i < (int)(sizeof base / sizeof base[0])) names[i] = base[i];
        else {
            snprintf(name_text[i], sizeof name_text[i], "chan:%d", i);
            names[i] = name_text[i];
        }
    }
    test_random_operations_agree_with_the_model();
    test_a_subscriber_over_its_limit_gets_nothing_more_but_still_counts();
    test_an_empty_channel_matches_only_an_empty_pattern();
    return checks_report();
}

/* test_pubsub_ring.c — a ring session as a Pub/Sub subscriber, server and client in one
 * process over plain memory: ring/session.c's deliver callback writes PushMessages into the
 * subscriber's reply ring, client/client_pubsub.c reads them back. Checks that messages arrive
 * in publish order, interleaved with the session's own replies in the order the server made
 * them (a PUBLISH to its own channel: the message, then PUBLISH's reply), after an EXEC's array
 * (never inside it), through a full reply ring (staged, then flushed in order), and that a
 * subscriber over client-output-buffer-limit's pubsub class is closed while the publisher goes
 * on, every PUBLISH answered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/client.h"
#include "client/client_pubsub.h"
#include "exec/db.h"
#include "ring/session.h"
#include "tests/test_helpers.h"

typedef struct peer {
    void *request_memory, *reply_memory;
    size_t size;
    int control[2];
    gr_client_t *client;
    gr_result_t result;
} peer_t;

static gr_rings_t *rings;

static void attach(peer_t *peer, uint64_t id, uint64_t capacity) {
    peer->size = gr_ring_segment_bytes(capacity);
    CHECK(posix_memalign(&peer->request_memory, 4096, peer->size) == 0 &&
          posix_memalign(&peer->reply_memory, 4096, peer->size) == 0, "memory");
    memset(peer->request_memory, 0, peer->size);
    memset(peer->reply_memory, 0, peer->size);
    char error[256];
    CHECK(gr_rings_add_session(rings, id, peer->request_memory, peer->size, peer->reply_memory, peer->size,
                               capacity, error, sizeof error) == 0, "session: %s", error);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, peer->control) == 0, "socketpair");
    peer->client = gr_client_new(peer->request_memory, peer->size, peer->reply_memory, peer->size, -1,
                                 peer->control[0], error, sizeof error);
    CHECK(peer->client != NULL, "client: %s", error);
}

static void detach(peer_t *peer, uint64_t id) {
    gr_client_free(peer->client);
    gr_rings_remove_session(rings, id);
    close(peer->control[0]);
    close(peer->control[1]);
    free(peer->request_memory);
    free(peer->reply_memory);
}

/* Send one command (space-separated words) without waiting. */
static void send_words(peer_t *peer, const char *words) {
    char buffer[4096];
    size_t lengths[64], argc = 0, length = 0;
    for (const char *p = words; *p;) {
        while (*p == ' ') p++;
        const char *start = p;
        while (*p && *p != ' ') p++;
        if (p == start) break;
        memcpy(buffer + length, start, (size_t)(p - start));
        lengths[argc++] = (size_t)(p - start);
        length += (size_t)(p - start);
    }
    CHECK(gr_client_send_argv(peer->client, (const uint8_t *)buffer, length, lengths, argc) == GR_CLIENT_OK,
          "send %s", words);
}

/* The reader's output: the list's count, and the bytes to search in. */
static uint8_t output[1 << 20];

static uint32_t read_items(peer_t *peer, size_t max_count, long *written) {
    uint32_t count = 0;
    int status = 0;
    *written = gr_client_pubsub_read(peer->client, max_count, 0, output, sizeof output, &count, &status);
    CHECK(status == GR_CLIENT_OK, "read status %d", status);
    CHECK(*written >= 5 && output[0] == '[', "read wrote a list (%ld)", *written);
    return count;
}

/* 1 if the texts occur in output[from..to) in this order; *at moves past the last. */
static int in_order(long to, const char *const *texts, size_t n) {
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *found = memmem(output + at, (size_t)to - at, texts[i], strlen(texts[i]));
        if (!found) {
            fprintf(stderr, "  missing %s after byte %zu\n", texts[i], at);
            return 0;
        }
        at = (size_t)(found - output) + strlen(texts[i]);
    }
    return 1;
}

int main(void) {
    gr_server_t *db = gr_db_new(11);
    rings = gr_rings_new(db);
    peer_t publisher, subscriber;
    attach(&publisher, 1, 1u << 16);
    attach(&subscriber, 2, 1u << 16);
    long written;

    /* SUBSCRIBE: its confirmations are replies the reader returns. */
    send_words(&subscriber, "SUBSCRIBE news other");
    gr_rings_poll(rings);
    CHECK(read_items(&subscriber, 16, &written) == 2, "two confirmations");
    {
        const char *texts[] = {"reply", "subscribe", "news", "reply", "subscribe", "other"};
        CHECK(in_order(written, texts, 6), "the confirmations in order");
    }
    CHECK(read_items(&subscriber, 16, &written) == 0, "nothing more");

    /* 100 PUBLISHes from another session: every message, in order, straight into the ring. */
    for (int i = 0; i < 100; i++) {
        char words[64];
        snprintf(words, sizeof words, "PUBLISH news m%03d", i);
        send_words(&publisher, words);
    }
    gr_rings_poll(rings);
    for (int i = 0; i < 100; i++) {
        CHECK(gr_client_receive(publisher.client, &publisher.result) == GR_CLIENT_OK &&
              publisher.result.template_id == GR_T_INTEGER_REPLY && publisher.result.integer == 1,
              "PUBLISH %d counted one receiver", i);
    }
    CHECK(read_items(&subscriber, 1000, &written) == 100, "100 messages");
    {
        int ordered = 1;
        size_t at = 0;
        for (int i = 0; i < 100 && ordered; i++) {
            char text[16];
            snprintf(text, sizeof text, "m%03d", i);
            const uint8_t *found = memmem(output + at, (size_t)written - at, text, strlen(text));
            ordered = found != NULL;
            if (found) at = (size_t)(found - output) + strlen(text);
        }
        CHECK(ordered, "the messages in publish order");
        const char *shape[] = {"type", "message", "pattern", "channel", "news", "data", "m000"};
        CHECK(in_order(written, shape, 7), "a message is redis-py's dict");
    }

    /* The subscriber's own PUBLISH and PING: the message comes before PUBLISH's reply (the
     * server delivers while PUBLISH runs), then PONG. max_count 1 takes them one at a time. */
    send_words(&subscriber, "PUBLISH news self");
    send_words(&subscriber, "PING");
    gr_rings_poll(rings);
    CHECK(read_items(&subscriber, 1, &written) == 1, "one at a time");
    {
        const char *texts[] = {"message", "self"};
        CHECK(in_order(written, texts, 2), "first the message");
    }
    CHECK(read_items(&subscriber, 16, &written) == 2, "then two replies");
    {
        const char *texts[] = {"reply", "reply", "PONG"};
        CHECK(in_order(written, texts, 3), "PUBLISH's count, then PONG");
    }

    /* Inside EXEC the message waits for the EXEC array to close. */
    send_words(&subscriber, "MULTI");
    send_words(&subscriber, "PUBLISH news inside");
    send_words(&subscriber, "PING");
    send_words(&subscriber, "EXEC");
    gr_rings_poll(rings);
    CHECK(read_items(&subscriber, 16, &written) == 5, "OK, 2 QUEUED, EXEC's array, the message");
    {
        const char *texts[] = {"OK", "QUEUED", "QUEUED", "PONG", "message", "inside"};
        CHECK(in_order(written, texts, 6), "the message after EXEC's array");
    }

    /* A full reply ring: messages are staged and reach the ring in order as it drains. */
    char payload[1100];
    memset(payload, 'x', sizeof payload - 1);
    payload[sizeof payload - 1] = '\0';
    int next_expected = 0, published = 0;
    for (int round = 0; round < 200 && next_expected < 300; round++) {
        for (int i = 0; i < 10 && published < 300; i++, published++) {
            char words[1200];
            snprintf(words, sizeof words, "PUBLISH news %04d%s", published, payload);
            send_words(&publisher, words);
        }
        gr_rings_poll(rings);
        while (gr_client_in_flight(publisher.client))
            CHECK(gr_client_receive(publisher.client, &publisher.result) == GR_CLIENT_OK, "PUBLISH answered");
        if (round % 3 != 2) continue;   /* let the ring fill: the subscriber reads every third round */
        for (;;) {
            gr_rings_poll(rings);
            uint32_t count = read_items(&subscriber, 1000, &written);
            if (!count) break;
            size_t at = 0;
            for (uint32_t k = 0; k < count; k++, next_expected++) {
                char text[16];
                snprintf(text, sizeof text, "%04d", next_expected);
                const uint8_t *found = memmem(output + at, (size_t)written - at, text, 4);
                CHECK(found != NULL, "message %d in order", next_expected);
                if (found) at = (size_t)(found - output) + 4;
            }
        }
    }
    CHECK(next_expected == 300, "all 300 messages through a ring of 64 KiB (%d)", next_expected);
    CHECK(db->kills_pending == 0, "nobody was closed under the default limits");

    /* Over client-output-buffer-limit pubsub (hard 32 KiB): the subscriber is closed; the
     * publisher's every PUBLISH is answered and nothing waits for the subscriber. */
    char error[256];
    CHECK(gr_db_config_set(db, "client-output-buffer-limit", "pubsub 32kb 16kb 60", error, sizeof error) == 0,
          "CONFIG SET client-output-buffer-limit: %s", error);
    for (int i = 0; i < 300; i++) {
        char words[1200];
        snprintf(words, sizeof words, "PUBLISH news %s", payload);
        send_words(&publisher, words);
        if (i % 10 == 9) {
            gr_rings_poll(rings);
            while (gr_client_in_flight(publisher.client))
                CHECK(gr_client_receive(publisher.client, &publisher.result) == GR_CLIENT_OK &&
                      publisher.result.template_id == GR_T_INTEGER_REPLY, "PUBLISH answered while the subscriber lags");
        }
    }
    CHECK(db->kills_pending == 1, "the slow subscriber is to be closed (%lld)", (long long)db->kills_pending);
    int killed = 0;
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next)
        if (conn->id == 2 && conn->kill_requested) killed = 1;
    CHECK(killed, "the subscriber's session is the one marked");

    detach(&subscriber, 2);
    detach(&publisher, 1);
    gr_rings_free(rings);
    gr_db_free(db);
    return checks_report();
}

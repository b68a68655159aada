/* test_server.c — the C serving loop (server/server.c) over real loopback sockets: a RESP
 * client is accepted, served and closed; maxclients refuses with Redis's error; CLIENT KILL
 * closes another client; a client that never reads is dropped at client-output-buffer-limit
 * with Redis's log line; gr_server_run returns when Python's fd is readable. Under
 * run_c_tests.py --sanitize this is the loop's memory check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/alloc.h"
#include "exec/db.h"
#include "ring/session.h"
#include "server/server.h"
#include "tests/test_helpers.h"

#define SLICE_NS 2000000   /* each gr_server_run: 2 ms */

static gr_serve_loop_t *server;
static int port;

static int connect_client(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&address, sizeof address) == 0, "connect: %s", strerror(errno));
    return fd;
}

static void send_text(int fd, const char *text) {
    CHECK(send(fd, text, strlen(text), 0) == (ssize_t)strlen(text), "send");
}

/* Serve until `expected` has arrived on fd (or 2 s pass); 1 if it did, exactly. */
static int serve_until(int fd, const char *expected) {
    char got[4096];
    size_t have = 0, want = strlen(expected);
    for (int round = 0; round < 1000 && have < want; round++) {
        gr_server_run(server, SLICE_NS, 0, 0);
        ssize_t n = recv(fd, got + have, sizeof got - have - 1, MSG_DONTWAIT);
        if (n > 0) have += (size_t)n;
        if (n == 0) break;
    }
    got[have] = '\0';
    CHECK(have == want && memcmp(got, expected, want) == 0, "got %s, expected %s", got, expected);
    return have == want;
}

/* Serve until the server has closed fd (EOF or reset), draining what it sends. */
static int serve_until_closed(int fd) {
    char sink[65536];
    for (int round = 0; round < 5000; round++) {
        gr_server_run(server, SLICE_NS, 0, 0);
        ssize_t n;
        while ((n = recv(fd, sink, sizeof sink, MSG_DONTWAIT)) > 0) {}
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return 1;
    }
    return 0;
}

int main(void) {
    gr_server_t *db = gr_db_new(7);
    gr_rings_t *rings = gr_rings_new(db);
    int python[2];
    CHECK(pipe(python) == 0, "pipe");
    server = gr_server_new(db, rings, python[0]);
    CHECK(server != NULL, "gr_server_new");

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    CHECK(bind(listener, (struct sockaddr *)&address, sizeof address) == 0 && listen(listener, 16) == 0 &&
          getsockname(listener, (struct sockaddr *)&address, &length) == 0, "listen");
    port = ntohs(address.sin_port);
    CHECK(gr_server_add_listener(server, listener, 0) == 0, "add listener");

    /* served, pipelined, inline and multibulk */
    int a = connect_client();
    send_text(a, "PING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n");
    serve_until(a, "+PONG\r\n$2\r\nhi\r\n");
    CHECK(gr_server_resp_clients(server) == 1, "one client");

    /* maxclients */
    char error[128];
    CHECK(gr_db_config_set(db, "maxclients", "1", error, sizeof error) == 0, "maxclients 1");
    int refused = connect_client();
    serve_until(refused, "-ERR max number of clients reached\r\n");
    CHECK(serve_until_closed(refused), "the refused client is closed");
    close(refused);
    CHECK(gr_db_config_set(db, "maxclients", "100", error, sizeof error) == 0, "maxclients 100");

    /* CLIENT KILL from another client closes a (its own OK first) */
    int b = connect_client();
    send_text(b, "CLIENT ID\r\n");
    serve_until(b, ":2\r\n");
    send_text(b, "CLIENT KILL ID 1\r\n");
    serve_until(b, ":1\r\n");
    CHECK(serve_until_closed(a), "the killed client is closed");
    close(a);
    CHECK(gr_server_resp_clients(server) == 1, "one client after the kill");

    /* Python's fd readable: the loop returns at once with GR_SERVE_PYTHON */
    CHECK(write(python[1], "x", 1) == 1, "write");
    CHECK(gr_server_run(server, 1000000000LL, 0, 0) & GR_SERVE_PYTHON, "returns for Python");
    char byte;
    CHECK(read(python[0], &byte, 1) == 1, "read");

    /* a client that never reads: dropped at the output buffer limit, logged */
    send_text(b, "*3\r\n$5\r\nRPUSH\r\n$4\r\nwide\r\n$1000\r\n");
    char value[1003];
    memset(value, 'v', 1000);
    memcpy(value + 1000, "\r\n", 3);
    send_text(b, value);
    serve_until(b, ":1\r\n");
    CHECK(gr_db_config_set(db, "client-output-buffer-limit", "normal 64kb 0 0", error, sizeof error) == 0, "limit");
    int greedy = connect_client();
    int small = 4096;
    setsockopt(greedy, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    fcntl(greedy, F_SETFL, O_NONBLOCK);
    const char *lrange = "LRANGE wide 0 -1\r\n";
    int dropped = 0;
    for (int round = 0; round < 20000 && !dropped; round++) {
        ssize_t sent = send(greedy, lrange, strlen(lrange), MSG_NOSIGNAL);
        if (sent < 0 && errno != EAGAIN) dropped = 1;
        gr_server_run(server, 100000, 0, 0);
        char log[4096];
        size_t n = gr_server_take_log(server, log, sizeof log - 1);
        log[n] = '\0';
        if (strstr(log, "scheduled to be closed ASAP for overcoming of output buffer limits.")) dropped = 1;
    }
    CHECK(dropped, "the greedy client was dropped and logged");
    CHECK(serve_until_closed(greedy), "the greedy client is closed");
    close(greedy);
    CHECK(gr_server_resp_clients(server) == 1, "only b is left");
    send_text(b, "PING\r\n");
    serve_until(b, "+PONG\r\n");
    close(b);

    gr_server_free(server);
    close(listener);
    close(python[0]);
    close(python[1]);
    gr_rings_free(rings);
    gr_db_free(db);
    CHECK(gr_mem_used_total() == 0, "%lld bytes left", (long long)gr_mem_used_total());
    return checks_report();
}

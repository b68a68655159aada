/* test_alloc.c — the counting allocator's helper-thread counters (core/alloc.h): a thread that
 * counts into its own counters leaves the process's untouched until the owner absorbs them,
 * and memory built on one thread and freed on another (a replica's full sync loaded aside, the
 * old data freed aside) brings every counter back to where it started. */
#include <pthread.h>

#include "core/alloc.h"
#include "tests/test_helpers.h"

enum { BLOCKS = 10000 };
static void *blocks[BLOCKS];

typedef struct job {
    gr_mem_counters_t counters;
    int allocate;
} job_t;

static void *worker(void *argument) {
    job_t *job = argument;
    gr_mem_thread_counters(&job->counters);
    for (int i = 0; i < BLOCKS; i++) {
        if (job->allocate) blocks[i] = gr_mem_alloc((size_t)(16 + i % 200), GR_MEM_STRING);
        else gr_mem_free(blocks[i], GR_MEM_STRING);
    }
    gr_mem_thread_counters(NULL);
    return NULL;
}

static void run(job_t *job) {
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, worker, job) == 0, "thread started");
    pthread_join(thread, NULL);
}

static void test_helper_threads_count_aside_and_absorb_back_to_zero(void) {
    const int64_t total = gr_mem_used_total(), strings = gr_mem_used_by(GR_MEM_STRING), live = gr_mem_allocations();
    job_t build = {.allocate = 1};
    run(&build);
    CHECK(gr_mem_used_total() == total && gr_mem_allocations() == live, "the process's counters untouched by the helper");
    CHECK(build.counters.allocations == BLOCKS && build.counters.by_category[GR_MEM_STRING] == build.counters.total &&
          build.counters.total >= (int64_t)BLOCKS * 16, "the helper's own counters hold what it built");
    gr_mem_absorb(&build.counters);
    CHECK(gr_mem_used_total() == total + build.counters.total && gr_mem_allocations() == live + BLOCKS,
          "absorbed: the process counts the built data");
    /* half freed on this thread, the other half by a helper */
    for (int i = 0; i < BLOCKS / 2; i++) gr_mem_free(blocks[i], GR_MEM_STRING), blocks[i] = NULL;
    job_t release = {.allocate = 0};
    void *rest[BLOCKS / 2];
    memcpy(rest, blocks + BLOCKS / 2, sizeof rest);
    memset(blocks, 0, sizeof blocks);
    memcpy(blocks, rest, sizeof rest);
    run(&release);   /* frees blocks[0..BLOCKS/2) = the second half; gr_mem_free(NULL) for the rest */
    CHECK(release.counters.allocations == -(BLOCKS / 2) && release.counters.total < 0, "the helper counted its frees");
    gr_mem_absorb(&release.counters);
    CHECK(gr_mem_used_total() == total && gr_mem_used_by(GR_MEM_STRING) == strings && gr_mem_allocations() == live,
          "every counter back where it started: %lld / %lld", (long long)gr_mem_used_total(), (long long)total);
}

int main(void) {
    test_helper_threads_count_aside_and_absorb_back_to_zero();
    return checks_report();
}

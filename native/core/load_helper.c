/* load_helper.c — the load's second thread (load_helper.h): posted jobs first, the filler when
 * none of them can go on, a short pause when all of them are starved and the filler is done.
 */
#include "core/load_helper.h"

#include <sched.h>

static void *helper_main(void *argument) {
    gr_load_helper_t *h = argument;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        int ran = 0;
        for (gr_load_job_t **link = &h->jobs; *link;) {
            gr_load_job_t *job = *link;
            pthread_mutex_unlock(&h->lock);
            int state = job->step(job);
            pthread_mutex_lock(&h->lock);
            if (state == GR_LOAD_JOB_DONE) {
                for (link = &h->jobs; *link != job; link = &(*link)->next) {}
                *link = job->next;
                job->done = 1;
                pthread_cond_broadcast(&h->finished);
                ran = 1;
                break;
            }
            if (state == GR_LOAD_JOB_MORE) {
                ran = 1;
                break;
            }
            link = &job->next;   /* starved: the next one (the list may have grown at its end only) */
        }
        if (ran) continue;
        if (h->filler && !h->filler_done) {
            pthread_mutex_unlock(&h->lock);
            int state = h->filler->step(h->filler);
            pthread_mutex_lock(&h->lock);
            if (state == GR_LOAD_JOB_DONE) h->filler_done = 1;
            continue;
        }
        if (h->jobs) {   /* all starved: their poster is about to hand them more */
            pthread_mutex_unlock(&h->lock);
            sched_yield();
            pthread_mutex_lock(&h->lock);
            continue;
        }
        if (h->stopping) break;
        pthread_cond_wait(&h->wake, &h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

int gr_load_helper_start(gr_load_helper_t *h, gr_load_job_t *filler) {
    *h = (gr_load_helper_t){.filler = filler};
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->wake, NULL);
    pthread_cond_init(&h->finished, NULL);
    if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
        pthread_mutex_destroy(&h->lock);
        pthread_cond_destroy(&h->wake);
        pthread_cond_destroy(&h->finished);
        return -1;
    }
    return 0;
}

void gr_load_helper_post(gr_load_helper_t *h, gr_load_job_t *job) {
    job->next = NULL;
    job->done = 0;
    pthread_mutex_lock(&h->lock);
    gr_load_job_t **link = &h->jobs;
    while (*link) link = &(*link)->next;
    *link = job;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
}

/* The filler's share the calling thread takes: slices while there are any and `until` is not
 * done (NULL: until the filler is). */
static void help_with_filler(gr_load_helper_t *h, gr_load_job_t *until) {
    if (!h->filler) return;
    pthread_mutex_lock(&h->lock);
    while (!h->filler_done && !(until && until->done)) {
        pthread_mutex_unlock(&h->lock);
        int state = h->filler->step(h->filler);
        pthread_mutex_lock(&h->lock);
        if (state == GR_LOAD_JOB_DONE) h->filler_done = 1;
    }
    pthread_mutex_unlock(&h->lock);
}

void gr_load_helper_wait(gr_load_helper_t *h, gr_load_job_t *job) {
    help_with_filler(h, job);
    pthread_mutex_lock(&h->lock);
    while (!job->done) pthread_cond_wait(&h->finished, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

void gr_load_helper_stop(gr_load_helper_t *h) {
    help_with_filler(h, NULL);
    pthread_mutex_lock(&h->lock);
    h->stopping = 1;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->thread, NULL);
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->wake);
    pthread_cond_destroy(&h->finished);
}

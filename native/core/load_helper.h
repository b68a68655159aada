/* load_helper.h — a second thread a load may hand work to (snapshot load: persist/snapshot.c
 * starts one, its type hooks find it in the reader, core/snapshot_io.h).
 *
 * The helper runs jobs. A job's step runs on the helper thread and does what it can at that
 * moment: GR_LOAD_JOB_DONE (finished: its poster's wait returns), GR_LOAD_JOB_MORE (it did some
 * and may do more now) or GR_LOAD_JOB_STARVED (it waits for the poster to hand it more input).
 * Jobs are served in the order they were posted, and after every step the helper starts again
 * from the first one. The filler (the snapshot's whole-file CRC, done in slices) runs only when
 * no posted job can go on, so the posted jobs, whose poster waits for them, come first; the
 * first thread takes filler slices too while it waits, so neither thread idles.
 *
 * The helper thread allocates nothing through core/alloc.h (its counters are plain integers,
 * one-threaded by design): a job's memory is allocated by its poster before it is posted.
 * What a job writes, its poster reads only after gr_load_helper_wait returned.
 */
#ifndef GR_LOAD_HELPER_H
#define GR_LOAD_HELPER_H

#include <pthread.h>

enum { GR_LOAD_JOB_DONE = 0, GR_LOAD_JOB_MORE = 1, GR_LOAD_JOB_STARVED = 2 };

typedef struct gr_load_job gr_load_job_t;
struct gr_load_job {
    int (*step)(gr_load_job_t *job);   /* on the helper thread */
    gr_load_job_t *next;               /* the helper's, while posted */
    int done;                          /* the helper's, under its lock */
};

typedef struct gr_load_helper {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* a job was posted, or stop */
    pthread_cond_t finished; /* a job is done */
    gr_load_job_t *jobs;     /* posted, not done, oldest first */
    gr_load_job_t *filler;   /* run when nothing else can: its DONE is final */
    int filler_done;
    int stopping;
} gr_load_helper_t;

/* Starts the thread with filler (may be NULL): 0, or -1 (no thread: the caller runs the
 * filler itself and hands nobody a helper). */
int gr_load_helper_start(gr_load_helper_t *helper, gr_load_job_t *filler);
/* Hands a job to the helper (job->step set by the caller). */
void gr_load_helper_post(gr_load_helper_t *helper, gr_load_job_t *job);
/* Until job's step returned DONE; meanwhile the calling thread runs the filler's steps too (a
 * filler's step must therefore be safe on both threads at once: it claims its share). */
void gr_load_helper_wait(gr_load_helper_t *helper, gr_load_job_t *job);
/* Runs the filler to its end beside the helper (every posted job must have been waited for),
 * then joins the thread. */
void gr_load_helper_stop(gr_load_helper_t *helper);

#endif

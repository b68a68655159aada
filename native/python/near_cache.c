/* near_cache.c — goblin_ring._near_cache: the ring client's near-cache, held in C.
 *
 * RingClient(cache_config=...) (client/ring.py's CachedRingClient) keeps the replies of
 * read-only single-key commands of its session here. A cached answer may be given only after
 * the session's reply ring was looked at (CLIENT TRACKING writes each invalidation there before
 * the writer is answered, or bumps the ring's invalidation epoch): that look is the C client's
 * gr_client_cache_check (native/client/client.c: the thread and fork claim, the control socket
 * seen open within the last millisecond, acquire loads of the reply ring's tail and epoch),
 * reached here through its address, so the hit path is one CPython call: NearCache.get(name)
 * checks, then looks the name up, and returns the cached object. CachedRingClient binds that
 * method as the instance's `get`, so a hit runs no Python bytecode at all.
 *
 * Anything but a hit calls the Python fallback, fallback(weak reference to the client, name, status):
 *   status 0  a miss (counted): the fallback asks the server and store()s the reply;
 *   > 0       the check's status sent the call elsewhere (another thread's session, a forked
 *             child, the session gone ...): the cache was flushed first, except for another
 *             thread (this session's cache stays right; the call goes to that thread's own);
 *   < 0       one of ours: DETACHED (the C client was freed or forsaken), BYPASS (a MULTI typed
 *             by hand: the server queues reads), NAME (not a bytes or str object exactly).
 * When the check says invalidations are waiting (CACHE_KEYS) or everything goes (CACHE_FLUSH)
 * they are applied here, in the same call, before the lookup; never on a miss's way back (an
 * invalidation taken while the miss's reply was read may be for a write newer than that reply:
 * it stays in the C client until the next check, after the store).
 *
 * Entries: `table` maps a GET key (bytes) or a command's argv tuple to its entry, `str_table` a
 * GET key given as str (its hash is cached in the str, so no encode per hit); `by_key` maps a
 * Redis key to the first entry of the chain of entries cached under it (what an invalidation
 * removes). Entries are kept in LRU order in a doubly linked list; past max_size the least
 * recently used goes. Used under the GIL only; it includes no goblin header and is built by
 * setup.py beside plain_loads.c (the check's statuses are given to the constructor).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

typedef int (*check_fn)(void *client);
typedef size_t (*take_fn)(void *client, uint8_t *buffer, size_t capacity);

enum { STATUS_MISS = 0, STATUS_DETACHED = -1, STATUS_BYPASS = -2, STATUS_NAME = -3 };

static PyObject *MISS;        /* lookup(): not cached (the miss is counted) */
static PyObject *ELSEWHERE;   /* lookup(): the check's status (in .status) sends the call elsewhere */

/* ---- entries ---- */

typedef struct entry {
    PyObject_HEAD
    PyObject *lookup;                 /* its key in its table: a GET key (bytes or str) or an argv tuple */
    PyObject *key;                    /* the Redis key (bytes) an invalidation names */
    PyObject *value;
    PyObject *table;                  /* borrowed: the dict holding it (which owns it) */
    struct entry *newer, *older;      /* LRU list, borrowed */
    struct entry *next_same, *prev_same;   /* the chain of entries under one Redis key, borrowed */
} entry_t;

static void entry_dealloc(entry_t *e) {
    Py_XDECREF(e->lookup);
    Py_XDECREF(e->key);
    Py_XDECREF(e->value);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "goblin_ring._near_cache._Entry",
    .tp_basicsize = sizeof(entry_t),
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "one cached reply (internal)",
};

/* ---- the cache ---- */

typedef struct {
    PyObject_HEAD
    void *client;                     /* gr_client_t *, NULL once detached */
    check_fn check;                   /* gr_client_cache_check */
    take_fn take;                     /* gr_client_cache_take */
    int status_keys, status_flush, status_other_thread;
    int bypass;
    int status;                       /* the status behind lookup()'s last ELSEWHERE */
    PyObject *table;                  /* bytes GET key or argv tuple -> entry */
    PyObject *str_table;              /* str GET key -> entry */
    PyObject *by_key;                 /* Redis key -> first entry of its chain */
    entry_t *newest, *oldest;
    Py_ssize_t count, max_size;
    unsigned long long hits, misses, invalidations, flushes;
    PyObject *owner;                  /* a weak reference to the client */
    PyObject *fallback;               /* fallback(owner, name, status) */
    uint8_t *taken;                   /* gr_client_cache_take's keys */
    size_t taken_capacity;
} cache_t;

static void lru_unlink(cache_t *c, entry_t *e) {
    if (e->newer) e->newer->older = e->older; else c->newest = e->older;
    if (e->older) e->older->newer = e->newer; else c->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void lru_push(cache_t *c, entry_t *e) {
    e->newer = NULL;
    e->older = c->newest;
    if (c->newest) c->newest->newer = e; else c->oldest = e;
    c->newest = e;
}

/* A used entry becomes the newest. */
static void lru_touch(cache_t *c, entry_t *e) {
    if (e != c->newest) {
        lru_unlink(c, e);
        lru_push(c, e);
    }
}

/* Forget everything. The dicts own the entries; the list and chains are borrowed pointers. */
static void drop_all(cache_t *c) {
    c->newest = c->oldest = NULL;
    c->count = 0;
    if (c->by_key) PyDict_Clear(c->by_key);
    if (c->str_table) PyDict_Clear(c->str_table);
    if (c->table) PyDict_Clear(c->table);
}

/* Take one entry out of the list, its key's chain and its table. */
static void drop_entry(cache_t *c, entry_t *e) {
    Py_INCREF(e);
    lru_unlink(c, e);
    c->count--;
    if (e->prev_same) {
        e->prev_same->next_same = e->next_same;
        if (e->next_same) e->next_same->prev_same = e->prev_same;
    } else if (e->next_same) {            /* the chain's head: the next one heads it now */
        e->next_same->prev_same = NULL;
        if (PyDict_SetItem(c->by_key, e->key, (PyObject *)e->next_same) < 0) PyErr_Clear();
    } else if (PyDict_DelItem(c->by_key, e->key) < 0) {
        PyErr_Clear();
    }
    e->next_same = e->prev_same = NULL;
    if (PyDict_DelItem(e->table, e->lookup) < 0) PyErr_Clear();
    Py_DECREF(e);
}

/* Everything cached under one Redis key goes. 0, or -1 with an error set. */
static int invalidate_key(cache_t *c, PyObject *key) {
    c->invalidations++;
    PyObject *head = PyDict_GetItemWithError(c->by_key, key);
    if (!head) return PyErr_Occurred() ? -1 : 0;
    Py_INCREF(head);
    int failed = PyDict_DelItem(c->by_key, key);
    for (entry_t *e = (entry_t *)head; e;) {
        entry_t *next = e->next_same;
        e->next_same = e->prev_same = NULL;
        lru_unlink(c, e);
        c->count--;
        Py_INCREF(e);
        if (PyDict_DelItem(e->table, e->lookup) < 0) failed = -1;
        Py_DECREF(e);
        e = next;
    }
    Py_DECREF(head);
    return failed;
}

static void flush(cache_t *c) {
    c->flushes++;
    drop_all(c);
}

/* Keys as gr_client_cache_take gives them ({u32 length, bytes} each, native order). */
static int invalidate_packed(cache_t *c, const uint8_t *at, size_t length) {
    const uint8_t *end = at + length;
    while (end - at >= 4) {
        uint32_t n;
        memcpy(&n, at, 4);
        at += 4;
        if (n > (size_t)(end - at)) return -1;
        PyObject *key = PyBytes_FromStringAndSize((const char *)at, n);
        if (!key) return -1;
        int failed = invalidate_key(c, key);
        Py_DECREF(key);
        if (failed) return -1;
        at += n;
    }
    return at == end ? 0 : -1;
}

/* The check, and what it asks for done here: 0 (the cache may answer) or the status that
 * sends the call elsewhere. Never fails: what cannot be applied key by key flushes. */
static int settle(cache_t *c) {
    if (!c->client) return STATUS_DETACHED;
    int status = c->check(c->client);
    if (__builtin_expect(status == 0, 1)) return 0;
    if (status == c->status_keys || status == c->status_flush) {
        size_t length = c->take(c->client, c->taken, c->taken_capacity);
        if (length > c->taken_capacity) {   /* more keys than room: grow, then take them */
            size_t capacity = c->taken_capacity ? c->taken_capacity : 256;
            while (capacity < length) capacity *= 2;
            uint8_t *grown = PyMem_Realloc(c->taken, capacity);
            if (!grown) {   /* they stay stashed (the next check says KEYS again): trust nothing now */
                flush(c);
                return 0;
            }
            c->taken = grown;
            c->taken_capacity = capacity;
            length = c->take(c->client, c->taken, c->taken_capacity);
        }
        if (status == c->status_flush || length > c->taken_capacity) {
            flush(c);
        } else if (invalidate_packed(c, c->taken, length) < 0) {   /* out of memory: trust nothing */
            PyErr_Clear();
            flush(c);
        }
        return 0;
    }
    if (status != c->status_other_thread) flush(c);   /* a fork, a closed client, the session gone */
    return status;
}

static PyObject *value_out(PyObject *value) {
    Py_INCREF(value);
    if (PyList_CheckExact(value)) {   /* a cached list is not shared with callers */
        /* held meanwhile: the copy's allocation can run the collector, so finalizers, so
         * another thread, which could drop the entry (and the list) under us */
        PyObject *copy = PyList_GetSlice(value, 0, PyList_GET_SIZE(value));
        Py_DECREF(value);
        return copy;
    }
    return value;
}

/* A hit: counted, made the newest, its value given out. */
static PyObject *answer(cache_t *c, entry_t *e) {
    c->hits++;
    lru_touch(c, e);
    return value_out(e->value);
}

/* fallback(owner, name, status): the owner is the weak reference to the client (a client
 * dropped by everyone but a held `get` was closed by its finalizer: the fallback says so). */
static PyObject *fall_back(cache_t *c, PyObject *name, int status) {
    PyObject *code = PyLong_FromLong(status);
    if (!code) return NULL;
    PyObject *value = PyObject_CallFunctionObjArgs(c->fallback, c->owner, name, code, NULL);
    Py_DECREF(code);
    return value;
}

/* get(name): the GET hit path, one call. */
static PyObject *cache_get(cache_t *c, PyObject *name) {
    PyObject *table;
    if (PyBytes_CheckExact(name)) table = c->table;
    else if (PyUnicode_CheckExact(name)) table = c->str_table;
    else return fall_back(c, name, STATUS_NAME);
    if (__builtin_expect(c->bypass, 0)) return fall_back(c, name, STATUS_BYPASS);
    int status = settle(c);
    if (__builtin_expect(status != 0, 0)) return fall_back(c, name, status);
    entry_t *e = (entry_t *)PyDict_GetItemWithError(table, name);
    if (!e) {
        if (PyErr_Occurred()) return NULL;
        c->misses++;
        return fall_back(c, name, STATUS_MISS);
    }
    return answer(c, e);
}

static PyObject *table_for(cache_t *c, PyObject *lookup) {
    return PyUnicode_CheckExact(lookup) ? c->str_table : c->table;
}

/* lookup(key): the check, then the cached value, MISS (counted) or ELSEWHERE (.status says why). */
static PyObject *cache_lookup(cache_t *c, PyObject *lookup) {
    int status = settle(c);
    if (status != 0) {
        c->status = status;
        Py_INCREF(ELSEWHERE);
        return ELSEWHERE;
    }
    entry_t *e = (entry_t *)PyDict_GetItemWithError(table_for(c, lookup), lookup);
    if (!e) {
        if (PyErr_Occurred()) return NULL;
        c->misses++;
        Py_INCREF(MISS);
        return MISS;
    }
    return answer(c, e);
}

/* store(lookup, key, value): keep a reply the server gave for a miss. */
static PyObject *cache_store(cache_t *c, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "store(lookup, key, value) takes 3 arguments");
        return NULL;
    }
    PyObject *lookup = args[0], *key = args[1];
    if (!PyBytes_CheckExact(key)) {
        PyErr_SetString(PyExc_TypeError, "store(): the Redis key must be bytes");
        return NULL;
    }
    PyObject *value = value_out(args[2]);
    if (!value) return NULL;
    PyObject *table = table_for(c, lookup);
    entry_t *e = (entry_t *)PyDict_GetItemWithError(table, lookup);
    if (e) {
        Py_SETREF(e->value, value);
        lru_touch(c, e);
        Py_RETURN_NONE;
    }
    if (PyErr_Occurred()) goto fail;
    while (c->count >= c->max_size && c->oldest) drop_entry(c, c->oldest);
    e = PyObject_New(entry_t, &EntryType);
    if (!e) goto fail;
    Py_INCREF(lookup);
    Py_INCREF(key);
    e->lookup = lookup;
    e->key = key;
    e->value = value;
    e->table = table;
    e->newer = e->older = e->next_same = e->prev_same = NULL;
    if (PyDict_SetItem(table, lookup, (PyObject *)e) < 0) {
        Py_DECREF(e);
        return NULL;
    }
    entry_t *head = (entry_t *)PyDict_GetItemWithError(c->by_key, key);
    if (!head && PyErr_Occurred()) goto unstore;
    if (PyDict_SetItem(c->by_key, key, (PyObject *)e) < 0) goto unstore;
    if (head) {   /* still alive: the table holds it */
        e->next_same = head;
        head->prev_same = e;
    }
    lru_push(c, e);
    c->count++;
    Py_DECREF(e);
    Py_RETURN_NONE;
unstore:
    if (PyDict_DelItem(table, lookup) < 0) PyErr_Clear();
    Py_DECREF(e);
    return NULL;
fail:
    Py_DECREF(value);
    return NULL;
}

static PyObject *cache_invalidate(cache_t *c, PyObject *key) {
    if (!PyBytes_CheckExact(key)) {
        PyErr_SetString(PyExc_TypeError, "invalidate(): the Redis key must be bytes");
        return NULL;
    }
    if (invalidate_key(c, key) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *cache_clear(cache_t *c, PyObject *unused) {
    (void)unused;
    drop_all(c);
    Py_RETURN_NONE;
}

static PyObject *cache_flush(cache_t *c, PyObject *unused) {
    (void)unused;
    flush(c);
    Py_RETURN_NONE;
}

/* detach(): the C client is about to be freed or forsaken: never look at it again. */
static PyObject *cache_detach(cache_t *c, PyObject *unused) {
    (void)unused;
    c->client = NULL;
    drop_all(c);
    Py_RETURN_NONE;
}

static Py_ssize_t cache_length(cache_t *c) { return c->count; }

static int cache_contains(cache_t *c, PyObject *lookup) {
    return PyDict_Contains(table_for(c, lookup), lookup);
}

static PyObject *cache_attached(cache_t *c, void *unused) {
    (void)unused;
    return PyBool_FromLong(c->client != NULL);
}

static PyObject *cache_bypass_get(cache_t *c, void *unused) {
    (void)unused;
    return PyBool_FromLong(c->bypass);
}

static int cache_bypass_set(cache_t *c, PyObject *value, void *unused) {
    (void)unused;
    if (!value) {
        PyErr_SetString(PyExc_AttributeError, "bypass cannot be deleted");
        return -1;
    }
    int truth = PyObject_IsTrue(value);
    if (truth < 0) return -1;
    c->bypass = truth;
    return 0;
}

static PyObject *cache_stats(cache_t *c, void *unused);

static int cache_init(cache_t *c, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"client", "check", "take", "status_keys", "status_flush", "status_other_thread",
                            "max_size", "owner", "fallback", NULL};
    unsigned long long client, check, take;
    int keys, flush_, other;
    Py_ssize_t max_size;
    PyObject *owner, *fallback;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KKKiiinOO", names, &client, &check, &take, &keys, &flush_,
                                     &other, &max_size, &owner, &fallback))
        return -1;
    if (!client || !check || !take) {
        PyErr_SetString(PyExc_ValueError, "NearCache needs the client's and the check's addresses");
        return -1;
    }
    if (max_size < 1) {
        PyErr_SetString(PyExc_ValueError, "max_size must be a positive integer");
        return -1;
    }
    if (!PyWeakref_CheckRef(owner) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "NearCache needs a weak reference to its client and a callable fallback");
        return -1;
    }
    if (c->table) {
        PyErr_SetString(PyExc_RuntimeError, "NearCache is initialised once");
        return -1;
    }
    c->table = PyDict_New();
    c->str_table = PyDict_New();
    c->by_key = PyDict_New();
    if (!c->table || !c->str_table || !c->by_key) return -1;
    c->client = (void *)(uintptr_t)client;
    c->check = (check_fn)(uintptr_t)check;
    c->take = (take_fn)(uintptr_t)take;
    c->status_keys = keys;
    c->status_flush = flush_;
    c->status_other_thread = other;
    c->max_size = max_size;
    Py_INCREF(owner);
    c->owner = owner;
    Py_INCREF(fallback);
    c->fallback = fallback;
    return 0;
}

static int cache_traverse(cache_t *c, visitproc visit, void *arg) {
    Py_VISIT(c->table);
    Py_VISIT(c->str_table);
    Py_VISIT(c->by_key);
    Py_VISIT(c->owner);
    Py_VISIT(c->fallback);
    return 0;
}

static int cache_clear_refs(cache_t *c) {
    c->newest = c->oldest = NULL;
    c->count = 0;
    Py_CLEAR(c->by_key);
    Py_CLEAR(c->str_table);
    Py_CLEAR(c->table);
    Py_CLEAR(c->owner);
    Py_CLEAR(c->fallback);
    return 0;
}

static void cache_dealloc(cache_t *c) {
    PyObject_GC_UnTrack(c);
    cache_clear_refs(c);
    PyMem_Free(c->taken);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef cache_methods[] = {
    {"get", (PyCFunction)cache_get, METH_O,
     "get(name) -> GET's reply: cached, or the fallback's (a miss, or the call goes elsewhere)."},
    {"lookup", (PyCFunction)cache_lookup, METH_O,
     "lookup(key) -> the cached reply, MISS, or ELSEWHERE (the check's status in .status)."},
    {"store", (PyCFunction)(void (*)(void))cache_store, METH_FASTCALL,
     "store(lookup, key, value): keep value under lookup, invalidated with the Redis key `key`."},
    {"invalidate", (PyCFunction)cache_invalidate, METH_O, "invalidate(key): forget what is cached under key."},
    {"clear", (PyCFunction)cache_clear, METH_NOARGS, "clear(): forget every cached reply (tracking stays on)."},
    {"flush", (PyCFunction)cache_flush, METH_NOARGS, "flush(): forget everything, counted in stats.flushes."},
    {"detach", (PyCFunction)cache_detach, METH_NOARGS,
     "detach(): the C client goes; every later call takes the fallback."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef cache_members[] = {
    {"max_size", T_PYSSIZET, offsetof(cache_t, max_size), READONLY, "the most replies kept"},
    {"status", T_INT, offsetof(cache_t, status), READONLY, "the check's status behind lookup()'s last ELSEWHERE"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef cache_getset[] = {
    {"stats", (getter)cache_stats, NULL, "hits, misses, invalidations, flushes (a live view)", NULL},
    {"attached", (getter)cache_attached, NULL, "False once detached", NULL},
    {"bypass", (getter)cache_bypass_get, (setter)cache_bypass_set,
     "True: get() goes to the fallback (a MULTI typed by hand)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods cache_sequence = {
    .sq_length = (lenfunc)cache_length,
    .sq_contains = (objobjproc)cache_contains,
};

static PyTypeObject CacheType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "goblin_ring._near_cache.NearCache",
    .tp_basicsize = sizeof(cache_t),
    .tp_dealloc = (destructor)cache_dealloc,
    .tp_as_sequence = &cache_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "NearCache(client, check, take, status_keys, status_flush, status_other_thread, max_size, owner, "
              "fallback): one ring session's cached replies (see the module's doc).",
    .tp_traverse = (traverseproc)cache_traverse,
    .tp_clear = (inquiry)cache_clear_refs,
    .tp_methods = cache_methods,
    .tp_members = cache_members,
    .tp_getset = cache_getset,
    .tp_init = (initproc)cache_init,
    .tp_new = PyType_GenericNew,
};

/* ---- stats: a live view of a cache's counters ---- */

typedef struct {
    PyObject_HEAD
    cache_t *cache;
} stats_t;

static void stats_dealloc(stats_t *s) {
    Py_XDECREF(s->cache);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *stats_hits(stats_t *s, void *u) { (void)u; return PyLong_FromUnsignedLongLong(s->cache->hits); }
static PyObject *stats_misses(stats_t *s, void *u) { (void)u; return PyLong_FromUnsignedLongLong(s->cache->misses); }
static PyObject *stats_invalidations(stats_t *s, void *u) {
    (void)u;
    return PyLong_FromUnsignedLongLong(s->cache->invalidations);
}
static PyObject *stats_flushes(stats_t *s, void *u) { (void)u; return PyLong_FromUnsignedLongLong(s->cache->flushes); }

static PyObject *stats_repr(stats_t *s) {
    cache_t *c = s->cache;
    return PyUnicode_FromFormat("CacheStats(hits=%llu, misses=%llu, invalidations=%llu, flushes=%llu)",
                                c->hits, c->misses, c->invalidations, c->flushes);
}

static PyGetSetDef stats_getset[] = {
    {"hits", (getter)stats_hits, NULL, "answers given from the cache", NULL},
    {"misses", (getter)stats_misses, NULL, "lookups the cache could not answer", NULL},
    {"invalidations", (getter)stats_invalidations, NULL, "invalidated keys applied", NULL},
    {"flushes", (getter)stats_flushes, NULL, "times everything was dropped (flushAll, epoch moved, session gone)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject StatsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "goblin_ring._near_cache.CacheStats",
    .tp_basicsize = sizeof(stats_t),
    .tp_dealloc = (destructor)stats_dealloc,
    .tp_repr = (reprfunc)stats_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a near-cache's counters: hits, misses, invalidations, flushes (read live)",
    .tp_getset = stats_getset,
};

static PyObject *cache_stats(cache_t *c, void *unused) {
    (void)unused;
    stats_t *s = PyObject_New(stats_t, &StatsType);
    if (!s) return NULL;
    Py_INCREF(c);
    s->cache = c;
    return (PyObject *)s;
}

/* ---- module ---- */

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "goblin_ring._near_cache",
    "The ring client's near-cache in C: the hit path is one call (native/python/near_cache.c).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__near_cache(void) {
    if (PyType_Ready(&EntryType) < 0 || PyType_Ready(&CacheType) < 0 || PyType_Ready(&StatsType) < 0) return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (!module) return NULL;
    MISS = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    ELSEWHERE = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (!MISS || !ELSEWHERE) goto fail;
    Py_INCREF(&CacheType);
    Py_INCREF(&StatsType);
    if (PyModule_AddObject(module, "NearCache", (PyObject *)&CacheType) < 0 ||
        PyModule_AddObject(module, "CacheStats", (PyObject *)&StatsType) < 0) goto fail;
    Py_INCREF(MISS);
    Py_INCREF(ELSEWHERE);
    if (PyModule_AddObject(module, "MISS", MISS) < 0 || PyModule_AddObject(module, "ELSEWHERE", ELSEWHERE) < 0 ||
        PyModule_AddIntConstant(module, "DETACHED", STATUS_DETACHED) < 0 ||
        PyModule_AddIntConstant(module, "BYPASS", STATUS_BYPASS) < 0 ||
        PyModule_AddIntConstant(module, "NAME", STATUS_NAME) < 0)
        goto fail;
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}

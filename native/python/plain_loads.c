/* plain_loads.c — goblin_ring._plain_loads: marshal.loads for the plain replies, faster.
 *
 * The ring client writes a reply into its plain buffer as the Python object it stands for, in
 * the byte format of Python's marshal module (native/client/plain_reply.h); RingClient then
 * makes the object with one call. marshal.loads is general (references, recursion guards,
 * code objects, every version's codes) and costs ~120 instructions per element on top of
 * making the object; LRANGE's and LMPOP's replies are mostly bytes objects, so that is most of
 * what a value costs the client. loads() here reads the few codes the client's writers use,
 * with no references, in one bounds-checked pass:
 *
 *   'N' None  '.' Ellipsis  'T' True  'F' False  'i' int32  'l' long of up to 4 15-bit digits
 *   's' bytes  'z' short ASCII str  '[' list  ')' small tuple  '{' dict ... '0'
 *
 * Anything else (another code, a reference flag, a long of more digits, a truncated or
 * malformed buffer, a tree deeper than MAX_DEPTH) is handed whole to marshal.loads, so loads()
 * returns what marshal.loads returns, or raises what it raises, for every input (an error met
 * while making an object, an unhashable dict key say, is marshal's to raise too).
 *
 * This is a CPython C-API module, not part of the cffi extension (cffi cannot return Python
 * objects); it includes no goblin header and is built by setup.py beside it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 64   /* the client writes at most GR_PLAIN_MAX_DEPTH (32) levels */

static PyObject *marshal_loads;   /* the fallback: marshal.loads */

typedef struct {
    const uint8_t *at;
    const uint8_t *end;
} reader_t;

/* Not ours, or not well formed: loads() then hands the whole buffer to marshal.loads (as it
 * does when making an object failed). */
#define NOT_OURS NULL

static inline int take_u32(reader_t *r, uint32_t *value) {
    if (r->end - r->at < 4) return -1;
    memcpy(value, r->at, 4);   /* marshal is little-endian; so is every platform we build on */
    r->at += 4;
    return 0;
}

static PyObject *read_object(reader_t *r, int depth);

/* n elements into a new list (as_tuple 0) or tuple (1); NOT_OURS or NULL with an error. */
static PyObject *read_sequence(reader_t *r, Py_ssize_t n, int as_tuple, int depth) {
    if (n > r->end - r->at) return NOT_OURS;   /* every element takes at least one byte */
    PyObject *sequence = as_tuple ? PyTuple_New(n) : PyList_New(n);
    if (!sequence) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = read_object(r, depth + 1);
        if (!item) {
            Py_DECREF(sequence);
            return NULL;
        }
        if (as_tuple) PyTuple_SET_ITEM(sequence, i, item);
        else PyList_SET_ITEM(sequence, i, item);
    }
    return sequence;
}

static PyObject *read_dict(reader_t *r, int depth) {
    PyObject *dict = PyDict_New();
    if (!dict) return NULL;
    for (;;) {
        if (r->at >= r->end) break;
        if (*r->at == '0') {
            r->at++;
            return dict;
        }
        PyObject *key = read_object(r, depth + 1);
        if (!key) break;
        PyObject *value = read_object(r, depth + 1);
        if (!value) {
            Py_DECREF(key);
            break;
        }
        int failed = PyDict_SetItem(dict, key, value);   /* an unhashable key raises, as marshal's does */
        Py_DECREF(key);
        Py_DECREF(value);
        if (failed) break;
    }
    Py_DECREF(dict);
    return NULL;
}

/* A long of 1-4 15-bit digits (least significant first) whose top digit is not 0; marshal's
 * own checks for anything else. */
static PyObject *read_long(reader_t *r) {
    uint32_t coded;
    if (take_u32(r, &coded) != 0) return NOT_OURS;
    int32_t count = (int32_t)coded;
    int negative = count < 0;
    uint32_t digits = negative ? 0u - coded : coded;
    if (digits == 0 || digits > 4 || r->end - r->at < 2 * (Py_ssize_t)digits) return NOT_OURS;
    uint64_t magnitude = 0;
    for (uint32_t i = 0; i < digits; i++) {
        uint16_t digit;
        memcpy(&digit, r->at + 2 * i, 2);
        if (digit >= 1u << 15 || (i == digits - 1 && digit == 0)) return NOT_OURS;
        magnitude |= (uint64_t)digit << (15 * i);
    }
    r->at += 2 * digits;
    return negative ? PyLong_FromLongLong(-(long long)magnitude) : PyLong_FromUnsignedLongLong(magnitude);
}

static PyObject *read_object(reader_t *r, int depth) {
    if (r->at >= r->end || depth > MAX_DEPTH) return NOT_OURS;
    uint8_t code = *r->at++;
    uint32_t n;
    switch (code) {
    case 's':
        if (take_u32(r, &n) != 0 || n > (uint64_t)(r->end - r->at)) return NOT_OURS;
        r->at += n;
        return PyBytes_FromStringAndSize((const char *)(r->at - n), (Py_ssize_t)n);
    case '[':
        if (take_u32(r, &n) != 0 || (int32_t)n < 0) return NOT_OURS;
        return read_sequence(r, (Py_ssize_t)n, 0, depth);
    case ')':
        if (r->at >= r->end) return NOT_OURS;
        return read_sequence(r, *r->at++, 1, depth);
    case 'N': Py_RETURN_NONE;
    case '.': Py_INCREF(Py_Ellipsis); return Py_Ellipsis;
    case 'T': Py_RETURN_TRUE;
    case 'F': Py_RETURN_FALSE;
    case 'i':
        if (take_u32(r, &n) != 0) return NOT_OURS;
        return PyLong_FromLong((long)(int32_t)n);
    case 'l':
        return read_long(r);
    case 'z': {
        if (r->at >= r->end) return NOT_OURS;
        Py_ssize_t length = *r->at++;
        if (length > r->end - r->at) return NOT_OURS;
        for (Py_ssize_t i = 0; i < length; i++)
            if (r->at[i] >= 0x80) return NOT_OURS;
        r->at += length;
        return PyUnicode_DecodeASCII((const char *)(r->at - length), length, NULL);
    }
    case '{':
        return read_dict(r, depth);
    default:
        return NOT_OURS;
    }
}

static PyObject *loads(PyObject *module, PyObject *data) {
    (void)module;
    /* The buffer is held (a bytearray cannot be resized under us) while objects are made: a
     * list's allocation can run the garbage collector, and so any finalizer. */
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    reader_t r = {view.buf, (const uint8_t *)view.buf + view.len};
    PyObject *value = read_object(&r, 0);
    PyBuffer_Release(&view);
    if (value) return value;
    PyErr_Clear();   /* not ours, or an error making it: marshal's own answer, value or error */
    return PyObject_CallOneArg(marshal_loads, data);
}

static PyMethodDef methods[] = {
    {"loads", loads, METH_O,
     "loads(data) -> the object a plain reply buffer holds; the same as marshal.loads(data)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "goblin_ring._plain_loads",
    "marshal.loads for the ring client's plain replies, reading only the codes they use.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__plain_loads(void) {
    PyObject *marshal = PyImport_ImportModule("marshal");
    if (!marshal) return NULL;
    marshal_loads = PyObject_GetAttrString(marshal, "loads");
    Py_DECREF(marshal);
    if (!marshal_loads) return NULL;
    return PyModule_Create(&module_def);
}

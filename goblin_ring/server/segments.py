"""segments.py — session segments are created and released off the serving thread.

Creating a session's two segments reserves every page (posix_fallocate: the kernel zeroes
them), and releasing one returns its pages; for a large ring either takes long enough to
stall every other client if the serving thread did it (measured: a 1 GiB attach held other
clients' PING for 5 s). So one low-priority worker thread does both. The serving thread
hands it a job and goes on serving; a finished creation comes back through `completed()`,
announced on an eventfd that sits in the server's epoll set. posix_fallocate, ftruncate and
munmap release the GIL, so the worker never holds the serving thread off for longer than a
few lines of Python.
"""

from __future__ import annotations

import errno
import os
import queue
import threading
from dataclasses import dataclass

from .. import _native


@dataclass
class Created:
    """The outcome of one creation: both segments, or the reason there are none."""
    session_id: int
    segments: tuple[_native.Segment, _native.Segment] | None
    error: str = ""
    error_code: int = 1


def describe_os_error(error: OSError) -> str:
    """'No space left on device (ENOSPC)': the strerror and the errno's name, for one-line refusals."""
    name = errno.errorcode.get(error.errno or 0, "")
    reason = error.strerror or str(error)
    return f"{reason} ({name})" if name else reason


class SegmentWorker:
    def __init__(self):
        self.wakeup = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="goblin-segments", daemon=True)
        self._thread.start()

    # ---- the serving thread's side ----

    def create(self, session_id: int, names: tuple[str, str], size: int) -> None:
        self._jobs.put(("create", session_id, names, size))

    def release(self, *segments: _native.Segment | None) -> None:
        """Unlink now (cheap: no name is left), unmap on the worker (what frees the pages)."""
        kept = [segment for segment in segments if segment is not None]
        for segment in kept:
            segment.unlink()
        if kept:
            self._jobs.put(("release", kept))

    def completed(self) -> list[Created]:
        try:
            os.eventfd_read(self.wakeup)
        except BlockingIOError:
            pass
        done = []
        while True:
            try:
                done.append(self._done.get_nowait())
            except queue.Empty:
                return done

    def close(self) -> None:
        """Finish every job (so every segment is unlinked and unmapped), then stop the thread."""
        self._jobs.put(None)
        self._thread.join()
        for created in self.completed():       # created for sessions nobody collected
            if created.segments:
                for segment in created.segments:
                    segment.unlink()
                    segment.close()
        os.close(self.wakeup)

    # ---- the worker thread ----

    def _run(self) -> None:
        try:    # Linux: a thread's own nice value; the serving thread wins any shared CPU
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass
        while (job := self._jobs.get()) is not None:
            if job[0] == "create":
                _kind, session_id, names, size = job
                self._done.put(self._create(session_id, names, size))
                os.eventfd_write(self.wakeup, 1)
            else:
                for segment in job[1]:
                    try:
                        segment.close()
                    except Exception:  # noqa: BLE001 - never let one segment stop the worker
                        pass

    @staticmethod
    def _create(session_id: int, names: tuple[str, str], size: int) -> Created:
        made: list[_native.Segment] = []
        try:
            for name in names:
                made.append(_native.Segment(name, size, create=True))
            return Created(session_id, (made[0], made[1]))
        except Exception as error:  # noqa: BLE001 - any failure refuses this client only
            for segment in made:
                segment.unlink()
                segment.close()
            if isinstance(error, OSError) and error.errno == errno.ENOSPC:
                return Created(session_id, None, f"cannot reserve 2 x {size} bytes of shared memory in /dev/shm: "
                                                 f"{describe_os_error(error)}", error_code=13)
            reason = describe_os_error(error) if isinstance(error, OSError) else str(error)
            return Created(session_id, None, f"could not create the session's rings: {reason}")

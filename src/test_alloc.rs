//! The unit tests' allocator: the system's, counting what each thread
//! holds, so that a test can assert what a peer's input made the crate
//! allocate (a buffer that grows with the bytes received, never with the
//! size a peer announces).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

/// The system allocator, counting each thread's bytes.
pub(crate) struct Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn grew(bytes: usize) {
    let _ = HELD.try_with(|held| {
        let now = held.get().saturating_add(bytes);
        held.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrank(bytes: usize) {
    let _ = HELD.try_with(|held| held.set(held.get().saturating_sub(bytes)));
}

// SAFETY: every call is passed to `System` unchanged; the counting only
// touches const-initialized thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        shrank(layout.size());
        grew(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

/// The most bytes this thread held at once while `body` ran, above what
/// it held before.
pub(crate) fn peak_during<T>(body: impl FnOnce() -> T) -> (T, usize) {
    let start = HELD.with(Cell::get);
    PEAK.with(|peak| peak.set(start));
    let result = body();
    (result, PEAK.with(Cell::get) - start)
}

import Vapor

/// Runs a task's jobs on an event loop: a task that prefers it starts there without waking a thread of the
/// concurrency pool, and its nonisolated code, and the default actors it calls, run there too.
///
/// The task holds its executor preference, so an executor lives as long as the tasks that prefer it.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

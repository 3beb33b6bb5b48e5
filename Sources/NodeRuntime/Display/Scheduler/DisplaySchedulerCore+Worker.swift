import Compositor
import FoundationEssentials
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Left in a worker thread's dictionary: lets `waitUntilIdle` refuse to run on its own workers and
/// tells tests which worker ran a job. Created and read only on that worker's thread.
final class DisplayWorkerMarker: Sendable {
    let core: DisplaySchedulerCore
    let index: Int

    init(core: DisplaySchedulerCore, index: Int) {
        self.core = core
        self.index = index
    }
}

/// Parks one thread until another unparks it. The permit makes an unpark that comes before the park
/// count, so deciding to sleep (under the scheduler's lock) and sleeping (after releasing it) cannot
/// lose a wakeup.
/// - Thread: any
final class DisplayWorkerParker: Sendable {
    private let permit = ConditionLocked(false)

    func park() {
        permit.wait(until: { $0 }, then: { $0 = false })
    }

    /// Parks for at most `timeout` seconds; false when the time ran out first.
    func park(timeout: Double) -> Bool {
        permit.wait(until: { $0 }, timeout: timeout, then: { $0 = false }) != nil
    }

    func unpark() {
        permit.withLockSignalling { $0 = true }
    }
}

extension DisplaySchedulerCore {
    /// What a worker reports about the job it just finished, recorded under the lock at its next pick.
    enum Finished {
        case dropped(DisplayJobKind)
        case ran(DisplayJobKind, DisplayJobOutcome, milliseconds: Double)
    }

    enum WorkerStep {
        case run(Entry, policy: DisplayScheduler.WorkerPolicy, generation: Int)
        case park(wake: Int?, idleWaiters: [DisplayWorkerParker])
        case exit(wake: [Int], idleWaiters: [DisplayWorkerParker])
    }

    /// Each worker thread's marker, set when it starts.
    private static let workerMarker = ThreadLocalObject<DisplayWorkerMarker>()

    /// The marker of the worker running the caller, if the caller is a worker of any scheduler.
    static var currentWorkerMarker: DisplayWorkerMarker? { workerMarker.value }

    func startWorkers(name: String) {
        for index in parkers.indices {
            let threadName = DisplayScheduler.workerThreadName(name, index: index)
            PlatformThread.detach(name: threadName) { [self] in
                // Identity checks use the marker, not the name (a thread's name is cut to 15 bytes).
                Self.workerMarker.value = DisplayWorkerMarker(core: self, index: index)
                runWorker(index: index)
            }
        }
    }

    // MARK: Worker loop

    private func runWorker(index: Int) {
        let parker = parkers[index]
        var finished: Finished?
        var appliedGeneration = -1
        while true {
            let step: WorkerStep = state.withLock { state in
                if let finished {
                    state.activeCount -= 1
                    switch finished {
                    case .dropped(let kind):
                        state.statistics.count(kind) { $0.cancelledBeforeStart += 1 }
                    case .ran(let kind, .completed, milliseconds: let milliseconds):
                        state.statistics.count(kind) {
                            $0.completed += 1
                            $0.workMillisecondsCompleted += milliseconds
                        }
                    case .ran(let kind, .cancelled, milliseconds: let milliseconds):
                        state.statistics.count(kind) {
                            $0.cancelledWhileRunning += 1
                            $0.workMillisecondsCancelled += milliseconds
                        }
                    }
                }
                if state.workerStates[index] == .woken { state.wokenCount -= 1 }
                state.workerStates[index] = .active
                if let entry = state.pick(for: index) {
                    state.activeCount += 1
                    return .run(entry, policy: state.policy, generation: state.policyGeneration)
                }
                if state.isShutDown {
                    state.workerStates[index] = .exited
                    return .exit(wake: state.allWakeups(), idleWaiters: state.takeIdleWaitersIfIdle())
                }
                state.workerStates[index] = .parked
                state.parkedWorkers.append(index)
                // In serial mode the last job of another worker finishing is what lets worker 0 go on.
                return .park(wake: state.nextWakeup(), idleWaiters: state.takeIdleWaitersIfIdle())
            }
            finished = nil
            switch step {
            case .run(let entry, let policy, let generation):
                if generation != appliedGeneration {
                    policy.priority.applyToCurrentThread()
                    appliedGeneration = generation
                }
                let job = entry.job
                // The caller's check runs here, unlocked, rather than at cancel time: it may be slow or
                // take the caller's own locks.
                if job.isCancelled {
                    entry.onDropped?()
                    finished = .dropped(job.kind)
                } else {
                    state.withLock { $0.statistics.count(job.kind) { $0.started += 1 } }
                    let start = MonotonicClock.nanoseconds()
                    let outcome = entry.work { job.isCancelled }
                    finished = .ran(job.kind, outcome, milliseconds: MonotonicClock.milliseconds(since: start))
                }
            case .park(let wake, let idleWaiters):
                if let wake { parkers[wake].unpark() }
                for waiter in idleWaiters { waiter.unpark() }
                parker.park()
            case .exit(let wake, let idleWaiters):
                for index in wake { parkers[index].unpark() }
                for waiter in idleWaiters { waiter.unpark() }
                return
            }
        }
    }
}

import type { ListRunsInput, RunChanges, RunRecord, RunStore } from "../../shared/runs";
import type { AuthorizedThreadStore } from "./authorized-threads";
import { RunNotFoundError } from "../../shared/errors";
import { allows, currentAccess } from "./request-access";

/**
 * Run records under the request's auth handlers: a run is its thread's, so LangGraph Server's rules are the
 * thread's (`threads:read` to read or list a thread's runs, `threads:create_run` to create one, `threads:delete` to
 * delete one). A run of a thread the user may not see is a missing run. Outside a request, the store itself.
 */
export class AuthorizedRunStore implements RunStore {
  constructor(
    private readonly inner: RunStore,
    private readonly threads: AuthorizedThreadStore,
  ) {}

  async putRun(
    tenantId: string,
    run: RunRecord,
    options?: { createThread?: boolean },
  ): Promise<void> {
    const access = currentAccess();
    if (access) {
      const stamped = await this.threads.checkRunThread(access, tenantId, run.threadId);
      // The caller's record takes the stamp too: it answers the request with it.
      run.metadata = { ...run.metadata, ...stamped };
    }
    return this.inner.putRun(tenantId, run, options);
  }

  async getRun(tenantId: string, threadId: string, runId: string): Promise<RunRecord | undefined> {
    const access = currentAccess();
    if (access && !(await this.threads.canRead(access, tenantId, threadId))) return undefined;
    return this.inner.getRun(tenantId, threadId, runId);
  }

  async listRuns(input: ListRunsInput): Promise<RunRecord[]> {
    const access = currentAccess();
    if (access && !(await this.threads.canRead(access, input.tenantId, input.threadId))) return [];
    return this.inner.listRuns(input);
  }

  async deleteRun(tenantId: string, threadId: string, runId: string): Promise<void> {
    const access = currentAccess();
    if (access) {
      // A run left by a creation that failed before its thread existed is removed whatever the filters say.
      const decision = await access.decide("threads:delete", {
        thread_id: threadId,
        run_id: runId,
      });
      const thread = decision.pattern && (await this.threads.unfiltered(tenantId, threadId));
      if (thread && !allows(decision, thread.metadata)) throw new RunNotFoundError(runId);
    }
    return this.inner.deleteRun(tenantId, threadId, runId);
  }

  // The run machinery's own steps, on runs a request already reached through this store.
  updateRun(
    tenantId: string,
    threadId: string,
    runId: string,
    changes: RunChanges,
    now: number,
  ): Promise<RunRecord | undefined> {
    return this.inner.updateRun(tenantId, threadId, runId, changes, now);
  }
  forgetThread(tenantId: string, threadId: string): Promise<void> {
    return this.inner.forgetThread(tenantId, threadId);
  }
}

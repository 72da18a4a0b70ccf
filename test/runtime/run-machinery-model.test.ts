import { randomUUID } from "node:crypto";
import {
  Annotation,
  END,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import fc from "fast-check";
import { createHandler, type ApiHandler, type HandlerOptions } from "../../src/runtime/handler";
import type { HandlerContext } from "../../src/runtime/types";
import { faultInjectingClient, type FaultInjectingClient } from "../support/fault-injection";
import {
  commandArb,
  RunMachineryModel,
  stepsOf,
  type Command,
  type HoldStep,
  type ModelRun,
  type ModelRunStatus,
} from "../support/run-machinery-model";
import { apiEvent, backendOptions, quietLogger, type Backend } from "./support";

/**
 * A model-based test of the run machinery through the handler (the real RunManager and thread stores): random
 * schedules of background runs (every multitask strategy), held nodes released, cancels, state updates, reads
 * and joins on one thread, and on DynamoDB a second handler on the same table whose client dies at a chosen
 * request (a process death, injected with SDK middleware). After every command the test waits until the
 * runtime is quiet (each run held at its latch, queued or ended: never by sleeping a fixed time), compares it
 * with the model of test/support/run-machinery-model.ts and checks the invariants:
 *
 * 1. no acknowledged write lost: every marker whose state update answered 200 is in the list, in order;
 * 2. a successful run's steps appear exactly once, contiguous and in order; an interrupted run leaves a prefix of
 *    them; a rolled-back run none, and none of its checkpoints is in the history;
 * 3. every acknowledged run ends in success, interrupted or error, and is absent only when rolled back;
 * 4. no run stays pending or running once everything is released (crashes included: within lease + recovery);
 * 5. the thread is never busy then without a run pending or running.
 */

const TENANT = "tenant-model";
const LEASE_MS = 1_200;
const HEARTBEAT_MS = 300;
const DEADLINE_MARGIN_MS = 1_000;
/** A join's Lambda time: its budget (less the margin and the answer's 2 s) is 400 ms. */
const JOIN_CONTEXT: HandlerContext = {
  awsRequestId: "join",
  getRemainingTimeInMillis: () => DEADLINE_MARGIN_MS + 2_000 + 400,
} as HandlerContext;
// Replaceable: any seed gives other schedules (fast-check prints the seed and path of a failure to replay).
const SEED = Number(process.env.MODEL_SEED ?? 20_261_202);
/** Jest timeout of each backend's property. */
const TIME_LIMIT_MS = 100_000;

const ListState = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** Latches a run's node waits on, by run label: opened by the test, or given up when the run is cancelled. */
class Latches {
  private readonly held = new Map<
    string,
    { step: number; open: boolean; waiting: number; openers: Set<() => void> }
  >();

  hold(label: string, step: number): void {
    this.held.set(label, { step, open: false, waiting: 0, openers: new Set() });
  }

  release(label: string): void {
    const latch = this.held.get(label);
    if (!latch) return;
    latch.open = true;
    for (const open of latch.openers) open();
  }

  releaseAll(): void {
    for (const label of this.held.keys()) this.release(label);
  }

  /** Nodes waiting on the run's latch now (a dead process's included). */
  waiting(label: string): number {
    return this.held.get(label)?.waiting ?? 0;
  }

  async pass(label: string, step: number, signal: AbortSignal | undefined): Promise<void> {
    const latch = this.held.get(label);
    if (!latch || latch.open || latch.step !== step) return;
    latch.waiting += 1;
    try {
      await new Promise<void>((resolve, reject) => {
        const stop = () => reject(new Error("aborted at the latch"));
        if (signal?.aborted) return stop();
        signal?.addEventListener("abort", stop, { once: true });
        latch.openers.add(resolve);
      });
    } finally {
      latch.waiting -= 1;
    }
  }
}

/** Three nodes, each appending `<label>:<step>` (the run's `configurable.label`); any may wait on a latch. */
function listGraph(latches: Latches): HandlerOptions["graph"] {
  const step =
    (index: number) => async (_state: typeof ListState.State, config: LangGraphRunnableConfig) => {
      const label = String(config.configurable?.label);
      await latches.pass(label, index, config.signal);
      return { items: [`${label}:${index}`] };
    };
  return ({ checkpointer }) =>
    new StateGraph(ListState)
      .addNode("n1", step(1))
      .addNode("n2", step(2))
      .addNode("n3", step(3))
      .addEdge(START, "n1")
      .addEdge("n1", "n2")
      .addEdge("n2", "n3")
      .addEdge("n3", END)
      .compile({ checkpointer });
}

/** The fields of the API's JSON the test reads (runs, states, threads); absent ones are undefined. */
interface Body {
  run_id?: string;
  status?: string;
  kwargs?: { config?: { configurable?: { label?: string } } };
  values?: { items?: string[] };
  metadata?: { run_id?: string };
}

interface Answer {
  status: number;
  body: Body & Body[];
}

async function call(
  handler: ApiHandler,
  method: string,
  path: string,
  body?: unknown,
  context?: HandlerContext,
): Promise<Answer> {
  const [route, query] = path.split("?");
  const event = apiEvent(method, route!, {
    tenantId: TENANT,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (query) {
    event.rawQueryString = query;
    event.queryStringParameters = Object.fromEntries(new URLSearchParams(query));
  }
  const result = await handler(event, context);
  return { status: result.statusCode, body: result.body ? JSON.parse(result.body) : undefined };
}

/** What the runtime shows of the thread: its runs' statuses (reading each recovers it), state and status. */
interface Observation {
  runs: Record<string, string>;
  items: string[];
  thread: string;
}

/** The run status a quiet runtime shows for a run of the model. */
const EXPECTED_STATUS: Record<ModelRunStatus, string> = {
  pending: "pending",
  held: "running",
  success: "success",
  interrupted: "interrupted",
  rolledBack: "absent",
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Schedule {
  readonly threadId = `model-${randomUUID()}`;
  readonly model = new RunMachineryModel();
  /** Run ids by label, of every run created (acknowledged or found after a crash). */
  readonly runIds = new Map<string, string>();
  /** Whether the model still knows the runtime's state exactly (an unacknowledged run may have been created). */
  certain = true;
  private readonly unacknowledged: string[] = [];
  private readonly dead: FaultInjectingClient[] = [];
  private labels = 0;
  private markers = 0;

  private static count = 0;
  /** Labels unique across schedules: the latches are the graph's, shared by every schedule. */
  private readonly prefix = `s${++Schedule.count}`;

  constructor(
    private readonly handler: ApiHandler,
    private readonly options: HandlerOptions,
    private readonly latches: Latches,
    private readonly settleMs: number,
  ) {}

  private path(suffix = ""): string {
    return `/threads/${this.threadId}${suffix}`;
  }

  async start(): Promise<void> {
    const created = await call(this.handler, "POST", "/threads", { thread_id: this.threadId });
    expect(created.status).toBe(200);
  }

  private runBody(label: string, strategy: string) {
    return {
      assistant_id: "agent",
      input: { items: [] },
      config: { configurable: { label } },
      multitask_strategy: strategy,
      if_not_exists: "create",
    };
  }

  private pick(index: number, filter: (run: ModelRun) => boolean = () => true) {
    const candidates = this.model.runs.filter(filter);
    return candidates.length === 0 ? undefined : candidates[index % candidates.length];
  }

  /** Runs one command; returns what went against the model or the invariants (empty: nothing). */
  async apply(command: Command): Promise<string[]> {
    const problems: string[] = [];
    switch (command.kind) {
      case "create": {
        const label = `r${this.prefix}x${++this.labels}`;
        if (command.hold > 0) this.latches.hold(label, command.hold);
        const answer = await call(
          this.handler,
          "POST",
          this.path("/runs"),
          this.runBody(label, command.strategy),
        );
        const accepted = this.model.create(label, command.hold, command.strategy);
        if (answer.status === 200) this.runIds.set(label, answer.body.run_id!);
        if (answer.status !== (accepted ? 200 : 409)) {
          problems.push(
            ...this.unlike(
              `create ${label}: answered ${answer.status}, expected ${accepted ? 200 : 409}`,
            ),
          );
        }
        break;
      }
      case "crash":
        problems.push(...(await this.crashCreate(command.strategy, command.hold, command.after)));
        break;
      case "release": {
        const run = this.pick(
          command.pick,
          (candidate) =>
            candidate.hold > 0 &&
            !candidate.released &&
            (candidate.status === "pending" || candidate.status === "held"),
        );
        if (!run) return [];
        this.latches.release(run.label);
        this.model.release(run);
        break;
      }
      case "cancel": {
        const run = this.pick(command.pick);
        if (!run) return [];
        const absent = run.status === "rolledBack";
        const answer = await call(
          this.handler,
          "POST",
          this.path(
            `/runs/${this.runIds.get(run.label)}/cancel?action=${command.action}${command.wait ? "&wait=1" : ""}`,
          ),
        );
        this.model.cancel(run, command.action);
        const expected = absent ? 404 : command.wait ? 204 : 202;
        if (answer.status !== expected) {
          problems.push(
            ...this.unlike(`cancel ${run.label}: answered ${answer.status}, expected ${expected}`),
          );
        }
        break;
      }
      case "update": {
        const marker = `m${++this.markers}`;
        const answer = await call(this.handler, "POST", this.path("/state"), {
          values: { items: [marker] },
          as_node: "n3",
        });
        // Accepted only when the thread is idle; a 409 is the answer otherwise.
        const expected = this.model.busy() ? 409 : 200;
        if (answer.status === 200) this.model.acknowledge(marker);
        if (answer.status !== expected) {
          problems.push(
            ...this.unlike(`update ${marker}: answered ${answer.status}, expected ${expected}`),
          );
        }
        break;
      }
      case "read": {
        const answer =
          command.what === "state"
            ? await call(this.handler, "GET", this.path("/state"))
            : command.what === "history"
              ? await call(this.handler, "POST", this.path("/history"), { limit: 1000 })
              : command.what === "runs"
                ? await call(this.handler, "GET", this.path("/runs?limit=100"))
                : await call(this.handler, "GET", this.path());
        if (answer.status !== 200) problems.push(`read ${command.what}: answered ${answer.status}`);
        break;
      }
      case "join": {
        const run = this.pick(command.pick);
        if (!run) return [];
        const answer = await call(
          this.handler,
          "GET",
          this.path(`/runs/${this.runIds.get(run.label)}/join`),
          undefined,
          JOIN_CONTEXT,
        );
        const expected =
          run.status === "rolledBack"
            ? 404
            : run.status === "pending" || run.status === "held"
              ? 408
              : 200;
        if (answer.status !== expected) {
          problems.push(
            ...this.unlike(`join ${run.label}: answered ${answer.status}, expected ${expected}`),
          );
        }
        break;
      }
    }
    problems.push(...(await this.check(this.settleMs)));
    return problems;
  }

  /**
   * A run created through a second handler on the same table whose DynamoDB client dies once `after` requests
   * got through: during the creation (the run is then not acknowledged) or later, during its leg.
   */
  private async crashCreate(strategy: string, hold: HoldStep, after: number): Promise<string[]> {
    const fault = faultInjectingClient();
    this.dead.push(fault);
    fault.crashAt({ after });
    const dying = createHandler({ ...this.options, dynamodbClient: fault.client });
    const label = `c${this.prefix}x${++this.labels}`;
    if (hold > 0) this.latches.hold(label, hold);
    const answer = await call(dying, "POST", this.path("/runs"), this.runBody(label, strategy));
    if (answer.status === 200) {
      this.runIds.set(label, answer.body.run_id!);
      const accepted = this.model.create(label, hold, strategy as never);
      return accepted ? [] : this.unlike(`crash create ${label}: answered 200, expected 409`);
    }
    if (answer.status === 409) {
      return this.model.busy() && strategy === "reject"
        ? []
        : this.unlike(`crash create ${label}: answered 409 on an idle thread`);
    }
    // Not acknowledged: the run may exist all the same. The runs list says whether it does.
    this.unacknowledged.push(label);
    const listed = await this.listRuns();
    const found = listed.find((run) => run.kwargs?.config?.configurable?.label === label);
    if (found) {
      this.runIds.set(label, found.run_id!);
      this.certain = false;
    }
    return [];
  }

  private async listRuns(): Promise<Body[]> {
    const answer = await call(this.handler, "GET", this.path("/runs?limit=100"));
    return answer.status === 200 ? answer.body : [];
  }

  private async observe(): Promise<Observation> {
    const runs: Record<string, string> = {};
    for (const [label, runId] of this.runIds) {
      const answer = await call(this.handler, "GET", this.path(`/runs/${runId}`));
      runs[label] = answer.status === 404 ? "absent" : String(answer.body?.status);
    }
    const state = await call(this.handler, "GET", this.path("/state"));
    const thread = await call(this.handler, "GET", this.path());
    return {
      runs,
      items: state.body?.values?.items ?? [],
      thread: String(thread.body?.status),
    };
  }

  /** A difference from the model: a problem while the model knows the state exactly. */
  private unlike(problem: string): string[] {
    return this.certain ? [problem] : [];
  }

  /**
   * The model's view of a quiet runtime matches the observation. Once the model is not certain (a run whose
   * creation was not acknowledged exists), quiet means only that no run is on its way between two states, and
   * at the end (`final`) that every run ended.
   */
  private quiet(observed: Observation, final: boolean): boolean {
    if (!this.certain) {
      const statuses = Object.entries(observed.runs);
      const moving = statuses.some(
        ([label, status]) =>
          (final && status === "pending") ||
          (status === "running" && (final || this.latches.waiting(label) === 0)),
      );
      const busy = statuses.some(([, status]) => status === "running");
      return !moving && (observed.thread === "busy") === busy;
    }
    for (const run of this.model.runs) {
      if (observed.runs[run.label] !== EXPECTED_STATUS[run.status]) return false;
      if (run.status === "held" && this.latches.waiting(run.label) === 0) return false;
    }
    // Busy while a run holds or waits for the thread; idle otherwise (every run here ends its graph).
    if (observed.thread !== (this.model.busy() ? "busy" : "idle")) return false;
    return !this.certain || arraysEqual(observed.items, this.model.list);
  }

  /** Waits until the runtime is quiet (or `timeoutMs` passes), then checks it against model and invariants. */
  async check(timeoutMs: number, final = false): Promise<string[]> {
    const until = Date.now() + timeoutMs;
    let observed = await this.observe();
    // At the end, also the runs no request acknowledged (a creation whose process died): listing recovers them
    // once a lease has passed since their last change.
    const settled = async () =>
      !final ||
      !(await this.listRuns()).some((run) => run.status === "pending" || run.status === "running");
    while (!(this.quiet(observed, final) && (await settled())) && Date.now() < until) {
      await sleep(25);
      if (final) await this.handler.recoverRuns(oneThread(this.threadId));
      observed = await this.observe();
    }
    const problems: string[] = [];
    if (!this.quiet(observed, final)) {
      problems.push(
        `not as modelled after ${timeoutMs} ms: observed ${JSON.stringify(observed)}, model ${JSON.stringify(
          {
            runs: Object.fromEntries(
              this.model.runs.map((run) => [run.label, EXPECTED_STATUS[run.status]]),
            ),
            items: this.model.list,
            thread: this.model.busy() ? "busy" : "idle",
          },
        )}`,
      );
    }
    problems.push(...(await this.invariants(observed, final)));
    return problems;
  }

  private async invariants(observed: Observation, final: boolean): Promise<string[]> {
    const problems: string[] = [];
    const { items } = observed;
    // (1) No acknowledged state update lost: every marker, once, in order.
    const markers = items.filter((item) => item.startsWith("m"));
    if (!arraysEqual(markers, this.model.markers)) {
      problems.push(
        `(1) markers ${JSON.stringify(markers)}, acknowledged ${JSON.stringify(this.model.markers)}`,
      );
    }
    const listed = await this.listRuns();
    const statuses = new Map<string, string>();
    for (const run of listed) {
      const label = run.kwargs?.config?.configurable?.label;
      if (label !== undefined) statuses.set(label, String(run.status));
    }
    // (2) Each run's steps: a contiguous prefix, once; all of them on success, none when rolled back.
    const labels = new Set([...this.runIds.keys(), ...this.unacknowledged]);
    for (const item of items) if (!item.startsWith("m")) labels.add(item.split(":")[0]!);
    for (const label of labels) {
      const positions = items.flatMap((item, index) =>
        item.startsWith(`${label}:`) ? [index] : [],
      );
      const own = positions.map((index) => items[index]!);
      const contiguous = positions.every((position, index) => position === positions[0]! + index);
      if (!contiguous || !arraysEqual(own, stepsOf(label, own.length))) {
        problems.push(
          `(2) ${label}'s steps ${JSON.stringify(own)} at ${JSON.stringify(positions)}`,
        );
      }
      const status = statuses.get(label) ?? "absent";
      if (status === "success" && own.length !== 3) {
        problems.push(`(2) ${label} succeeded with steps ${JSON.stringify(own)}`);
      }
      if (status === "absent" && own.length > 0) {
        problems.push(`(2) ${label} is absent (rolled back) but left ${JSON.stringify(own)}`);
      }
    }
    // (2) A rolled-back run's checkpoints are not in the history.
    const history = await call(this.handler, "POST", this.path("/history"), { limit: 1000 });
    const writers = new Set(
      (history.status === 200 ? history.body : []).map((state) => state.metadata?.run_id),
    );
    for (const run of this.model.runs) {
      const runId = this.runIds.get(run.label);
      if (run.status === "rolledBack" && runId !== undefined && writers.has(runId)) {
        problems.push(`(2) ${run.label} was rolled back but its checkpoints are in the history`);
      }
    }
    if (!final) return problems;
    // (3) Every acknowledged run ended, and is absent only when rolled back.
    for (const run of this.model.runs) {
      const status = statuses.get(run.label) ?? "absent";
      const allowed =
        run.status === "rolledBack" ? ["absent"] : ["success", "interrupted", "error"];
      if (!allowed.includes(status)) {
        problems.push(`(3) ${run.label} (${run.status} in the model) is ${status}`);
      }
    }
    // (4) No run pending or running once everything is released.
    const unsettled = listed.filter((run) => run.status === "pending" || run.status === "running");
    for (const run of unsettled) {
      problems.push(
        `(4) run ${run.kwargs?.config?.configurable?.label} is still ${run.status} at quiescence`,
      );
    }
    // (5) The thread is not busy without a run pending or running.
    if (unsettled.length === 0 && observed.thread === "busy") {
      problems.push("(5) the thread is busy at quiescence with no run pending or running");
    }
    return problems;
  }

  /** Releases every latch, waits for every run to end (crashed ones recovered) and checks the end state. */
  async quiesce(): Promise<string[]> {
    this.latches.releaseAll();
    this.model.releaseAll();
    const problems = await this.check(this.settleMs + LEASE_MS, true);
    await this.abandon();
    return problems;
  }

  /** Ends the schedule without waiting for its runs (it failed already): every latch opens, the dead stay dead. */
  async abandon(): Promise<void> {
    this.latches.releaseAll();
    for (const fault of this.dead.splice(0)) {
      // A second handler whose crash point was never reached dies now: nothing it left running goes on.
      fault.crash();
      await fault.quiesce();
      fault.destroy();
    }
  }
}

async function* oneThread(threadId: string) {
  yield { tenantId: TENANT, threadId };
}

function arraysEqual(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

/** Runs a schedule; fails (fast-check then shrinks it) with the first step that breaks the model or an invariant. */
async function runSchedule(
  harness: { handler: ApiHandler; options: HandlerOptions; latches: Latches },
  settleMs: number,
  commands: Command[],
): Promise<void> {
  const schedule = new Schedule(harness.handler, harness.options, harness.latches, settleMs);
  await schedule.start();
  for (const [step, command] of commands.entries()) {
    const problems = await schedule.apply(command);
    if (problems.length > 0) {
      await schedule.abandon();
      expect({ step, command, problems }).toEqual({ step, command, problems: [] });
    }
  }
  const problems = await schedule.quiesce();
  expect({ step: "quiescence", problems }).toEqual({ step: "quiescence", problems: [] });
}

const PLANS: Array<{
  backend: Backend;
  crashes: boolean;
  numRuns: number;
  maxCommands: number;
  settleMs: number;
}> = [
  { backend: "memory", crashes: false, numRuns: 60, maxCommands: 12, settleMs: 2_000 },
  {
    backend: "dynamodb",
    crashes: true,
    numRuns: 25,
    maxCommands: 12,
    settleMs: 1_500 + LEASE_MS,
  },
];

describe.each(PLANS)("the run machinery against its model ($backend)", (plan) => {
  const latches = new Latches();
  let harness: { handler: ApiHandler; options: HandlerOptions; latches: Latches };

  beforeAll(async () => {
    const options: HandlerOptions = {
      graph: listGraph(latches),
      logger: quietLogger,
      metrics: false,
      runLeaseMs: LEASE_MS,
      runHeartbeatMs: HEARTBEAT_MS,
      deadlineMarginMs: DEADLINE_MARGIN_MS,
      ...(await backendOptions(plan.backend)),
    };
    harness = { handler: createHandler(options), options, latches };
  });

  const title = plan.crashes
    ? "keeps its invariants over random schedules, a second handler's process dying at a chosen request (injected by SDK middleware)"
    : "keeps its invariants over random schedules";
  it(
    title,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(commandArb(plan.crashes), {
            minLength: 1,
            maxLength: plan.maxCommands,
          }),
          (commands) => runSchedule(harness, plan.settleMs, commands),
        ),
        {
          numRuns: plan.numRuns,
          seed: SEED,
          // Shrinking a failure costs a wait per try: it stops in time, and reports the smallest found so far.
          interruptAfterTimeLimit: TIME_LIMIT_MS - 15_000,
          markInterruptAsFailure: true,
        },
      );
    },
    TIME_LIMIT_MS,
  );
});

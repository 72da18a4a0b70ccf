import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { RUN_JOB_KIND, type RunJobEvent } from "./dispatchers";
import type { RunDispatcher, RunJob } from "./run-manager";

/**
 * Runs jobs in the worker function: one asynchronous invocation per job. Lambda keeps the event, retries a
 * failed invocation twice, and sends what still fails to the function's on-failure destination.
 */
export class LambdaDispatcher implements RunDispatcher {
  constructor(
    private readonly client: LambdaClient,
    private readonly functionName: string,
  ) {}

  async dispatch(job: RunJob): Promise<void> {
    const event: RunJobEvent = { kind: RUN_JOB_KIND, ...job };
    await this.client.send(
      new InvokeCommand({
        FunctionName: this.functionName,
        InvocationType: "Event",
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
    );
  }
}

/** A handler's dispatcher to its worker function, with a client built from the environment unless one is given. */
export function openWorkerDispatcher(
  functionName: string,
  client?: LambdaClient,
): LambdaDispatcher {
  return new LambdaDispatcher(client ?? new LambdaClient({}), functionName);
}

import { Construct } from "constructs";
import { LambdaEventSourceMapping } from "@cdktf/provider-aws/lib/lambda-event-source-mapping";
import { THREAD_RECORD_SK } from "../../src/table/keys";
import { TABLE_DEFINITION } from "../../src/table/definition";

/**
 * Only removals of thread records, by DynamoDB TTL or by a deletion: the cleaner then deletes the rest of that
 * thread's items (they carry no TTL of their own), keeping a live generation if the thread lives again. After a
 * deletion it catches items a concurrent writer stored under the deleted generation.
 */
export const THREAD_RECORD_REMOVAL_FILTER = {
  eventName: ["REMOVE"],
  dynamodb: { Keys: { [TABLE_DEFINITION.sortKey]: { S: [THREAD_RECORD_SK] } } },
};

export interface CleanerTriggerProps {
  streamArn: string;
  functionArn: string;
  deadLetterQueueArn: string;
  tags: Record<string, string>;
}

/**
 * Feeds the table's stream, filtered to removals of thread records, to the cleaner function. The filter holds
 * no data worth a customer-managed key (and one would need Lambda grants in the key policy).
 */
export function createCleanerTrigger(
  scope: Construct,
  id: string,
  props: CleanerTriggerProps,
): LambdaEventSourceMapping {
  return new LambdaEventSourceMapping(scope, id, {
    eventSourceArn: props.streamArn,
    functionName: props.functionArn,
    startingPosition: "TRIM_HORIZON",
    batchSize: 100,
    maximumBatchingWindowInSeconds: 5,
    maximumRetryAttempts: 5,
    bisectBatchOnFunctionError: true,
    functionResponseTypes: ["ReportBatchItemFailures"],
    filterCriteria: { filter: [{ pattern: JSON.stringify(THREAD_RECORD_REMOVAL_FILTER) }] },
    destinationConfig: { onFailure: { destinationArn: props.deadLetterQueueArn } },
    tags: props.tags,
  });
}

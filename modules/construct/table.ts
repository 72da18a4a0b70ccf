import { Construct } from "constructs";
import { DynamodbTable } from "@cdktf/provider-aws/lib/dynamodb-table";
import { TABLE_DEFINITION } from "../../src/table/definition";
import type { Flag } from "./expressions";

export interface TableProps {
  name: string;
  kmsKeyArn: string;
  deletionProtection: Flag;
  tags: Record<string, string>;
}

/**
 * The checkpoint table, built from the same definition the code and its tests use: keys, indexes, TTL attribute
 * and the stream the expired-thread cleaner reads. Encrypted with the module's key, recoverable, protected.
 */
export class Table extends Construct {
  readonly table: DynamodbTable;

  constructor(scope: Construct, id: string, props: TableProps) {
    super(scope, id);
    this.table = new DynamodbTable(this, "table", {
      name: props.name,
      billingMode: "PAY_PER_REQUEST",
      hashKey: TABLE_DEFINITION.partitionKey,
      rangeKey: TABLE_DEFINITION.sortKey,
      attribute: TABLE_DEFINITION.attributes.map((attribute) => ({
        name: attribute.name,
        type: attribute.type,
      })),
      globalSecondaryIndex: TABLE_DEFINITION.globalSecondaryIndexes.map((index) => ({
        name: index.name,
        hashKey: index.partitionKey,
        rangeKey: index.sortKey,
        projectionType: index.projection,
      })),
      ttl: { attributeName: TABLE_DEFINITION.ttlAttribute, enabled: true },
      pointInTimeRecovery: { enabled: true },
      serverSideEncryption: { enabled: true, kmsKeyArn: props.kmsKeyArn },
      deletionProtectionEnabled: props.deletionProtection,
      streamEnabled: true,
      streamViewType: TABLE_DEFINITION.streamViewType,
      tags: props.tags,
    });
  }
}

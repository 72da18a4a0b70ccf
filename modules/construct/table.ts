import { Construct } from "constructs";
import { TerraformLocal, Token } from "../cdktf";
import { DynamodbTable } from "@cdktf/provider-aws/lib/dynamodb-table";
import { TABLE_DEFINITION } from "../../src/table/definition";
import { attributeOf, choose, countIf, type Flag } from "./expressions";

/** A table created elsewhere, with the same definition (keys, indexes, TTL attribute, a KEYS_ONLY stream). */
export interface ExistingTable {
  tableName: string;
  tableArn: string;
  /** Its stream: the cleaner reads it. */
  streamArn: string;
}

export interface TableProps {
  name: string;
  kmsKeyArn: string;
  deletionProtection: Flag;
  tags: Record<string, string>;
  /** Create the table (default true); false uses `existing`. */
  create?: Flag;
  existing?: ExistingTable;
}

/**
 * The checkpoint table, built from the same definition the code and its tests use: keys, indexes, TTL attribute
 * and the stream the expired-thread cleaner reads. Encrypted with the module's key, recoverable, protected.
 */
export class Table extends Construct {
  readonly table: DynamodbTable;
  /** The table the functions use, created or existing. */
  readonly name: string;
  readonly arn: string;
  readonly streamArn: string;

  constructor(scope: Construct, id: string, props: TableProps) {
    super(scope, id);
    const create = props.create ?? true;
    this.table = new DynamodbTable(this, "table", {
      count: create === true ? undefined : countIf(create),
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
    if (create === true) {
      this.name = this.table.name;
      this.arn = this.table.arn;
      this.streamArn = this.table.streamArn;
      return;
    }
    const existing = props.existing ?? { tableName: "", tableArn: "", streamArn: "" };
    // Locals: every policy and environment reads one name for the table, created or not.
    const attribute = (local: string, name: string, given: string) => {
      const value = choose(create, attributeOf(this.table, name), given);
      return Token.isUnresolved(value) ? new TerraformLocal(this, local, value).asString : value;
    };
    this.name = attribute("name", "name", existing.tableName);
    this.arn = attribute("arn", "arn", existing.tableArn);
    this.streamArn = attribute("stream_arn", "stream_arn", existing.streamArn);
  }
}

/** The existing table of the props (`tableName`, `tableArn`, `tableStreamArn`), if one is given. */
export function existingTable(props: {
  tableName?: string;
  tableArn?: string;
  tableStreamArn?: string;
}): ExistingTable | undefined {
  if (props.tableName === undefined) return undefined;
  return {
    tableName: props.tableName,
    tableArn: props.tableArn ?? "",
    streamArn: props.tableStreamArn ?? "",
  };
}

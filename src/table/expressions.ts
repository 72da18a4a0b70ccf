import { isDeepStrictEqual } from "node:util";
import { TABLE_KEYS } from "./definition";

/**
 * DynamoDB expressions built whole from named fragments: each fragment brings exactly the placeholders it uses,
 * and merging refuses two fragments that give one placeholder different meanings. Nothing is ever removed from
 * an expression after it is built (DynamoDB rejects unused placeholders; building only what is used avoids them).
 */
export interface Expression {
  text: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

export function expression(
  text: string,
  names: Record<string, string> = {},
  values: Record<string, unknown> = {},
): Expression {
  return { text, names, values };
}

/** Every condition holds (AND); an empty list is not a condition. */
export function allOf(...conditions: Expression[]): Expression {
  return join(conditions, " AND ");
}

/** At least one condition holds (OR). */
export function anyOf(...conditions: Expression[]): Expression {
  return join(conditions, " OR ");
}

function join(conditions: Expression[], operator: string): Expression {
  if (conditions.length === 0) throw new RangeError("A condition needs at least one part");
  if (conditions.length === 1) return conditions[0]!;
  return {
    text: conditions.map((condition) => `(${condition.text})`).join(operator),
    names: mergePlaceholders(conditions.map((condition) => condition.names)),
    values: mergePlaceholders(conditions.map((condition) => condition.values)),
  };
}

/** An UpdateItem fragment: SET and REMOVE clauses with their placeholders. */
export interface UpdateFragment {
  set: string[];
  remove: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
}

export function updateFragment(parts: Partial<UpdateFragment>): UpdateFragment {
  return {
    set: parts.set ?? [],
    remove: parts.remove ?? [],
    names: parts.names ?? {},
    values: parts.values ?? {},
  };
}

/** The parameters of one UpdateItem: the merged fragments and an optional condition. */
export interface UpdateParameters {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

export function renderUpdate(
  fragments: UpdateFragment[],
  condition?: Expression,
): UpdateParameters {
  const set = fragments.flatMap((fragment) => fragment.set);
  const remove = fragments.flatMap((fragment) => fragment.remove);
  const clauses = [];
  if (set.length > 0) clauses.push(`SET ${set.join(", ")}`);
  if (remove.length > 0) clauses.push(`REMOVE ${remove.join(", ")}`);
  const values = mergePlaceholders([
    ...fragments.map((fragment) => fragment.values),
    condition?.values ?? {},
  ]);
  return {
    UpdateExpression: clauses.join(" "),
    ...(condition ? { ConditionExpression: condition.text } : {}),
    ExpressionAttributeNames: mergePlaceholders([
      ...fragments.map((fragment) => fragment.names),
      condition?.names ?? {},
    ]),
    ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
  };
}

/** The parameters of a Query's key condition. */
export interface KeyConditionParameters {
  KeyConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

function keyCondition(condition: Expression): KeyConditionParameters {
  return {
    KeyConditionExpression: condition.text,
    ExpressionAttributeNames: condition.names,
    ExpressionAttributeValues: condition.values,
  };
}

const KEY_NAMES = { "#pk": TABLE_KEYS.partitionKey, "#sk": TABLE_KEYS.sortKey };

/** Every item of one partition (a thread). */
export function wholePartition(pk: string): KeyConditionParameters {
  return keyCondition(expression("#pk = :pk", { "#pk": TABLE_KEYS.partitionKey }, { ":pk": pk }));
}

/** One item, by a Query rather than a GetItem (for roles granted only Query). */
export function singleItem(pk: string, sk: string): KeyConditionParameters {
  return keyCondition(expression("#pk = :pk AND #sk = :sk", KEY_NAMES, { ":pk": pk, ":sk": sk }));
}

/** Items of one partition whose sort key is between `low` and `high`, both included. */
export function sortKeyBetween(pk: string, low: string, high: string): KeyConditionParameters {
  return keyCondition(
    expression("#pk = :pk AND #sk BETWEEN :low AND :high", KEY_NAMES, {
      ":pk": pk,
      ":low": low,
      ":high": high,
    }),
  );
}

/** Items of one partition whose sort key starts with `prefix`. */
export function sortKeyBeginsWith(pk: string, prefix: string): KeyConditionParameters {
  return keyCondition(
    expression("#pk = :pk AND begins_with(#sk, :prefix)", KEY_NAMES, {
      ":pk": pk,
      ":prefix": prefix,
    }),
  );
}

/** Items of one partition whose sort key is at least `low`. */
export function sortKeyFrom(pk: string, low: string): KeyConditionParameters {
  return keyCondition(
    expression("#pk = :pk AND #sk >= :low", KEY_NAMES, { ":pk": pk, ":low": low }),
  );
}

/** Entries of one partition of a secondary index. */
export function indexPartition(partitionKey: string, value: string): KeyConditionParameters {
  return keyCondition(
    expression("#partition = :partition", { "#partition": partitionKey }, { ":partition": value }),
  );
}

/** Entries of one partition of a secondary index whose sort key is at most `max`. */
export function indexPartitionUpTo(
  partitionKey: string,
  value: string,
  sortKey: string,
  max: number,
): KeyConditionParameters {
  return keyCondition(
    expression(
      "#partition = :partition AND #sort <= :max",
      { "#partition": partitionKey, "#sort": sortKey },
      { ":partition": value, ":max": max },
    ),
  );
}

/** A projection of attribute names, through placeholders (several of ours are reserved words). */
export function projection(attributes: readonly string[]): {
  ProjectionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
} {
  const names: Record<string, string> = {};
  const parts = attributes.map((attribute, index) => {
    names[`#p${index}`] = attribute;
    return `#p${index}`;
  });
  return { ProjectionExpression: parts.join(", "), ExpressionAttributeNames: names };
}

function mergePlaceholders<T>(maps: Array<Record<string, T>>): Record<string, T> {
  const merged: Record<string, T> = {};
  for (const map of maps) {
    for (const [placeholder, value] of Object.entries(map)) {
      if (Object.hasOwn(merged, placeholder) && !sameValue(merged[placeholder], value)) {
        throw new RangeError(`Placeholder ${placeholder} is used with two different values`);
      }
      merged[placeholder] = value;
    }
  }
  return merged;
}

function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}

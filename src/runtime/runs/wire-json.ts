/**
 * JSON as LangGraph Server writes values: LangChain objects (messages) as plain dicts, their fields and `type`
 * (`{"type": "human", "content": ..., "id": ...}`), never their serialization envelope (`{"lc": 1, ...}`).
 */
export function toWireJson(value: unknown): string {
  return JSON.stringify(
    value,
    function (this: Record<string, unknown>, key: string, current: unknown) {
      // `this[key]` is the value before its own toJSON ran; `current` after.
      const raw = this[key];
      if (
        typeof raw === "object" &&
        raw !== null &&
        typeof (raw as { toDict?: unknown }).toDict === "function"
      ) {
        const { type, data } = (raw as { toDict: () => { type: string; data: object } }).toDict();
        return { ...data, type };
      }
      return current;
    },
  );
}

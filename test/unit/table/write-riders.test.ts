import type { WriteRequest } from "../../../src/table/client";
import { WriteRiders } from "../../../src/table/write-riders";

// WriteRiders' rules with a recording sender in place of DynamoDB (the table client's real sender is exercised on
// DynamoDB Local in test/table/write-riders.test.ts).

function put(sk: string): WriteRequest {
  return { PutRequest: { Item: { pk: "t#a", sk } } };
}

function keyOf(request: WriteRequest): string {
  return "PutRequest" in request
    ? String(request.PutRequest.Item.sk)
    : String(request.DeleteRequest.Key.sk);
}

function sortKeys(requests: WriteRequest[]): string[] {
  return requests.map((request) =>
    "PutRequest" in request
      ? String(request.PutRequest.Item.sk)
      : `-${request.DeleteRequest.Key.sk}`,
  );
}

function recordingSender(fail?: (requests: WriteRequest[]) => boolean) {
  const sent: string[][] = [];
  const send = async (requests: WriteRequest[]) => {
    sent.push(sortKeys(requests));
    if (fail?.(requests)) throw new Error("refused");
  };
  return { sent, send };
}

afterEach(() => jest.useRealTimers());

describe("WriteRiders (recording sender stand-in)", () => {
  it("sends a rider inside the next batch write, and settles it with that request", async () => {
    const { sent, send } = recordingSender();
    const riders = new WriteRiders(send, keyOf, 50);
    let stored = false;
    const riding = riders.add(put("r#1")).then(() => (stored = true));
    await Promise.resolve();
    expect(stored).toBe(false);
    expect(sent).toEqual([]);
    await riders.carry([put("c#1")], 25);
    await riding;
    expect(sent).toEqual([["c#1", "r#1"]]);
  });

  it("sends a rider alone once no batch write came within the wait", async () => {
    jest.useFakeTimers();
    const { sent, send } = recordingSender();
    const riders = new WriteRiders(send, keyOf, 50);
    const riding = riders.add(put("r#1"));
    jest.advanceTimersByTime(49);
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(1);
    await riding;
    expect(sent).toEqual([["r#1"]]);
    // Sent once: a later batch carries nothing more.
    await riders.carry([put("c#1")], 25);
    expect(sent).toEqual([["r#1"], ["c#1"]]);
  });

  it("sends a rider whose key the batch also writes first and alone, keeping their order", async () => {
    const { sent, send } = recordingSender();
    const riders = new WriteRiders(send, keyOf, 50);
    const riding = riders.add(put("r#1"));
    const other = riders.add(put("r#2"));
    await riders.carry([{ DeleteRequest: { Key: { pk: "t#a", sk: "r#1" } } }], 25);
    await Promise.all([riding, other]);
    expect(sent).toEqual([["r#1"], ["-r#1", "r#2"]]);
  });

  it("fills only the room left in the batch's last request (no extra request for riders)", async () => {
    const { sent, send } = recordingSender();
    const riders = new WriteRiders(send, keyOf, 50);
    const first = riders.add(put("r#1"));
    const second = riders.add(put("r#2"));
    const full = Array.from({ length: 24 }, (_, index) => put(`c#${index}`));
    await riders.carry(full, 25);
    await first;
    expect(sent).toHaveLength(1);
    expect(sent[0]).toHaveLength(25);
    expect(sent[0]![24]).toBe("r#1");
    // The second waits for the next batch (none here, the batch limit was reached), then goes on its own.
    await riders.carry(
      Array.from({ length: 25 }, (_, index) => put(`d#${index}`)),
      25,
    );
    expect(sent[1]).toHaveLength(25);
    await second;
    expect(sent[2]).toEqual(["r#2"]);
  });

  it("rejects the riders of a batch that fails, and the batch's caller too", async () => {
    const { send } = recordingSender((requests) => requests.length > 1);
    const riders = new WriteRiders(send, keyOf, 50);
    const riding = riders.add(put("r#1"));
    await expect(riders.carry([put("c#1")], 25)).rejects.toThrow("refused");
    await expect(riding).rejects.toThrow("refused");
  });

  it("rejects a rider sent alone that fails, without throwing from its timer", async () => {
    jest.useFakeTimers();
    const { send } = recordingSender(() => true);
    const riders = new WriteRiders(send, keyOf, 50);
    const riding = riders.add(put("r#1"));
    const outcome = riding.then(
      () => "stored",
      (error: Error) => error.message,
    );
    jest.advanceTimersByTime(50);
    expect(await outcome).toBe("refused");
  });
});

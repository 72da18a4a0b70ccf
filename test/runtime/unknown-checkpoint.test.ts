import type { Client } from "@langchain/langgraph-sdk";
import { chatGraph, nestedGraph } from "./graphs";
import {
  backendOptions,
  bookingAssistants,
  postJson,
  startTestServer,
  type Backend,
  type TestServer,
} from "./support";

/** A checkpoint id no thread here has: shaped like LangGraph's own (a UUID v6), so only its absence is wrong. */
const UNKNOWN_ID = "1f0c0000-0000-6000-8000-000000000001";

/**
 * A checkpoint the thread does not have, named to the state routes (read, read at, update) or to a run (wait,
 * stream, background, batch): 404 before anything is written or queued, and the thread exactly as it was (a
 * paused thread keeps its pending approval, and a correct resume afterwards books).
 */
describe.each<Backend>(["memory", "dynamodb"])(
  "an unknown checkpoint (%s checkpointer)",
  (backend) => {
    let server: TestServer;
    let client: Client;
    let token: string;

    beforeAll(async () => {
      server = await startTestServer({
        assistants: { ...bookingAssistants(), chat: chatGraph, nested: nestedGraph },
        ...(await backendOptions(backend)),
      });
      client = await server.client(`tenant-unknown-checkpoint-${backend}`);
      token = await server.token(`tenant-unknown-checkpoint-${backend}`);
    });

    afterAll(async () => {
      await server.close();
    });

    /** Everything a client can see of a thread: its record, state, history and runs. */
    async function snapshot(threadId: string) {
      const thread = await client.threads.get(threadId);
      return {
        status: thread.status,
        values: thread.values,
        interrupts: thread.interrupts,
        state: await client.threads.getState(threadId),
        history: (await client.threads.getHistory(threadId, { limit: 100 })).map(
          (state) => state.checkpoint.checkpoint_id,
        ),
        runs: (await client.runs.list(threadId)).map((run) => [run.run_id, run.status]),
      };
    }

    async function chatThread(): Promise<string> {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "chat", {
        input: { messages: [{ role: "human", content: "hello" }] },
      });
      return thread.thread_id;
    }

    async function pausedBooking(): Promise<string> {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "booking", { input: { request: "move it" } });
      expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
      return thread.thread_id;
    }

    function post(path: string, body: unknown) {
      return postJson(`${server.url}${path}`, token, body);
    }

    it("refuses a state update from a checkpoint the thread does not have, and writes nothing", async () => {
      const threadId = await chatThread();
      const before = await snapshot(threadId);

      for (const body of [
        { values: { messages: [{ role: "human", content: "forged" }] }, checkpoint_id: UNKNOWN_ID },
        { values: { messages: [] }, checkpoint: { checkpoint_id: UNKNOWN_ID } },
        { values: null, as_node: "__end__", checkpoint_id: "1" },
      ]) {
        const answer = await post(`/threads/${threadId}/state`, body);
        expect(answer.status).toBe(404);
        expect(answer.body.detail).toMatch(/^Checkpoint not found: /);
      }
      expect(await snapshot(threadId)).toEqual(before);

      // The same update from the thread's own checkpoint still forks from it.
      await client.threads.updateState(threadId, {
        values: { messages: [{ role: "human", content: "again" }] },
        checkpointId: before.state.checkpoint.checkpoint_id!,
      });
      const after = await client.threads.getState<{ messages: Array<{ content: string }> }>(
        threadId,
      );
      expect(after.values.messages.map((message) => message.content)).toEqual([
        "hello",
        "echo: hello",
        "again",
      ]);
    });

    it("answers 404 for the state at a checkpoint the thread does not have", async () => {
      const threadId = await chatThread();
      const latest = (await client.threads.getState(threadId)).checkpoint;
      const own = latest.checkpoint_id!;

      await expect(client.threads.getState(threadId, UNKNOWN_ID)).rejects.toThrow(/404/);
      const answer = await fetch(`${server.url}/threads/${threadId}/state/${UNKNOWN_ID}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(answer.status).toBe(404);
      expect(await answer.json()).toEqual({
        detail: `Checkpoint not found: ${UNKNOWN_ID} of thread ${threadId}`,
      });
      await expect(
        client.threads.getState(threadId, { ...latest, checkpoint_id: UNKNOWN_ID }),
      ).rejects.toThrow(/404/);
      // Another thread's checkpoint is not this thread's.
      const other = await chatThread();
      const othersId = (await client.threads.getState(other)).checkpoint.checkpoint_id!;
      await expect(client.threads.getState(threadId, othersId)).rejects.toThrow(/404/);
      // The thread's own checkpoint, in a namespace it was not written in.
      const elsewhere = await post(`/threads/${threadId}/state/checkpoint`, {
        checkpoint: { checkpoint_id: own, checkpoint_ns: "inner:x" },
      });
      expect(elsewhere).toEqual({
        status: 404,
        body: { detail: `Checkpoint not found: ${own} in namespace inner:x of thread ${threadId}` },
      });

      expect((await client.threads.getState(threadId, own)).checkpoint.checkpoint_id).toBe(own);
      expect((await client.threads.getState(threadId, latest)).checkpoint.checkpoint_id).toBe(own);
    });

    it("refuses a resume from a checkpoint the paused thread does not have: nothing runs, the approval waits", async () => {
      const threadId = await pausedBooking();
      const before = await snapshot(threadId);
      const resume = { assistant_id: "booking", command: { resume: { approve: true } } };

      const waited = await post(`/threads/${threadId}/runs/wait`, {
        ...resume,
        checkpoint_id: "1",
      });
      expect(waited.status).toBe(404);
      expect(waited.body.detail).toMatch(/^Checkpoint not found: 1 /);
      const background = await post(`/threads/${threadId}/runs`, {
        ...resume,
        checkpoint: { checkpoint_id: UNKNOWN_ID },
      });
      expect(background.status).toBe(404);
      const streamed = await fetch(`${server.url}/threads/${threadId}/runs/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ ...resume, checkpoint_id: UNKNOWN_ID }),
      });
      expect(streamed.status).toBe(404);
      expect(streamed.headers.get("content-type")).toMatch(/json/);
      await expect(
        client.runs.wait(threadId, "booking", {
          command: { resume: { approve: true } },
          checkpointId: UNKNOWN_ID,
        }),
      ).rejects.toThrow(/404/);

      expect(await snapshot(threadId)).toEqual(before);
      const done = await client.runs.wait(threadId, "booking", {
        command: { resume: { approve: true } },
      });
      expect(done).toMatchObject({ approved: true, booked: true });
      expect((await client.threads.get(threadId)).status).toBe("idle");
    });

    it("refuses a run from the thread's own checkpoint in a namespace it was not written in", async () => {
      const threadId = await chatThread();
      const before = await snapshot(threadId);
      const own = before.state.checkpoint.checkpoint_id!;
      const answer = await post(`/threads/${threadId}/runs/wait`, {
        assistant_id: "chat",
        input: { messages: [{ role: "human", content: "fork" }] },
        checkpoint: { checkpoint_id: own, checkpoint_ns: "inner:x" },
      });
      expect(answer.status).toBe(404);
      expect(await snapshot(threadId)).toEqual(before);

      // The same fork at the root namespace runs.
      const forked = (await client.runs.wait(threadId, "chat", {
        input: { messages: [{ role: "human", content: "fork" }] },
        checkpointId: own,
      })) as { messages: Array<{ content: string }> };
      expect(forked.messages.map((message) => message.content)).toEqual([
        "hello",
        "echo: hello",
        "fork",
        "echo: fork",
      ]);

      // A thread that does not exist is named as such, not as a thread without the checkpoint.
      const missing = "00000000-0000-4000-8000-000000000000";
      expect(
        await post(`/threads/${missing}/runs/wait`, {
          assistant_id: "chat",
          input: {},
          checkpoint_id: own,
        }),
      ).toEqual({ status: 404, body: { detail: `Thread not found: ${missing}` } });
    });

    it("refuses a stateless run or batch naming a checkpoint, creating no run and no thread", async () => {
      const batchClient = await server.client(`tenant-unknown-batch-${backend}`);
      const batchToken = await server.token(`tenant-unknown-batch-${backend}`);
      // Kept threads: a run created by mistake leaves its thread behind, whenever it ends.
      const chat = {
        assistant_id: "chat",
        input: { messages: [{ role: "human", content: "hi" }] },
        on_completion: "keep",
      };
      const postAs = (path: string, body: unknown) =>
        postJson(`${server.url}${path}`, batchToken, body);

      expect((await postAs("/runs", { ...chat, checkpoint_id: UNKNOWN_ID })).status).toBe(404);
      expect((await postAs("/runs/wait", { ...chat, checkpoint_id: UNKNOWN_ID })).status).toBe(404);
      const batch = await postAs("/runs/batch", [chat, { ...chat, checkpoint_id: UNKNOWN_ID }]);
      expect(batch.status).toBe(404);
      expect(await batchClient.threads.count()).toBe(0);
      expect(await batchClient.threads.search()).toEqual([]);
    });
  },
);

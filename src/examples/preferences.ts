import {
  Annotation,
  END,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";

/**
 * The preferences assistant: long-term memory across threads. A user states a preference in one conversation
 * ("I prefer green tea"); in any later conversation, a new thread, the assistant still knows it, because the
 * preference lives in the store (`compile({ store })`, read by nodes from `config.store`), not in the thread's
 * checkpoints. Deterministic (no model), so tests and guides can rely on its answers.
 */
export const PreferencesState = Annotation.Root({
  /** Whose memory to use: a namespace label, so no "." or ":". */
  userId: Annotation<string>(),
  message: Annotation<string>(),
  /** The preference stated in this message, if any. */
  stated: Annotation<string | null>(),
  reply: Annotation<string | null>(),
});

export type PreferencesStateValues = typeof PreferencesState.State;

/** The stored memory: `["users", <userId>, "preferences"]`, key `favorite`. */
export interface StoredPreference {
  preference: string;
}

export const PREFERENCE_KEY = "favorite";

export function preferenceNamespace(userId: string): string[] {
  return ["users", userId, "preferences"];
}

export interface PreferencesGraphOptions {
  /** The long-term memory store (DynamoDBStore, BoundedInMemoryStore or any LangGraph store). */
  store: BaseStore;
  checkpointer?: BaseCheckpointSaver | false;
}

const STATEMENT = /\bI (?:prefer|like|love) (.+?)[.!]*$/i;

export function buildPreferencesGraph(options: PreferencesGraphOptions) {
  return new StateGraph(PreferencesState)
    .addNode("remember", async (state, config: LangGraphRunnableConfig) => {
      const stated = STATEMENT.exec(state.message.trim())?.[1]?.trim() ?? null;
      if (stated !== null) {
        const memory: StoredPreference = { preference: stated };
        await storeOf(config).put(preferenceNamespace(state.userId), PREFERENCE_KEY, memory);
      }
      return { stated };
    })
    .addNode("respond", async (state, config: LangGraphRunnableConfig) => {
      if (state.stated !== null) return { reply: `Noted: you prefer ${state.stated}.` };
      const item = await storeOf(config).get(preferenceNamespace(state.userId), PREFERENCE_KEY);
      const remembered = (item?.value as StoredPreference | undefined)?.preference;
      return {
        reply: remembered
          ? `You prefer ${remembered}.`
          : "I don't know your preference yet: tell me what you prefer.",
      };
    })
    .addEdge(START, "remember")
    .addEdge("remember", "respond")
    .addEdge("respond", END)
    .compile({ checkpointer: options.checkpointer, store: options.store });
}

function storeOf(config: LangGraphRunnableConfig): BaseStore {
  if (!config.store) {
    throw new Error(
      "The preferences graph needs a store: compile it with buildPreferencesGraph({ store })",
    );
  }
  return config.store;
}

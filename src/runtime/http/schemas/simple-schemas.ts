import { z } from "zod";

/**
 * `POST /invoke` (the simple face): a thread (checked as a thread id), the graph to run, and exactly one of
 * `input` (start) and `resume` (answer the pending interrupt). A field sent as null counts as sent.
 */
export const invokeSchema = z
  .looseObject({
    thread_id: z.unknown().optional(),
    assistant_id: z.unknown().optional(),
    input: z.unknown().optional(),
    resume: z.unknown().optional(),
  })
  .superRefine((body, context) => {
    const hasInput = "input" in body;
    if (hasInput === "resume" in body) {
      context.addIssue({
        code: "custom",
        path: [],
        message: `expected exactly one of input and resume, got ${hasInput ? "both" : "neither"}`,
      });
    }
  });

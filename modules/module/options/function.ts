import { type OptionSpec, hcl } from "../option-spec";
import { DEFAULTS } from "../../construct/props";
import {
  ARCHITECTURES,
  IMAGE_URI_PATTERN,
  MAX_API_TIMEOUT_SECONDS,
  MEMORY_SIZE_MB,
  NAME_PATTERN,
  RESERVED_NAME_ENDING_PATTERN,
  RESERVED_NAME_ENDING_RULE,
} from "../../construct/rules";

/** The image and the API function: what runs, and how big. */
export const FUNCTION_OPTIONS = {
  create: {
    moduleOnly:
      "the global switch: applyModuleToggles gives every resource its count (module-toggles.ts)",
    type: "bool",
    description:
      "Create the module's resources; false plans nothing (every output null but module_version), for a module instance that is switched off without removing its block",
    default: true,
  },
  name: {
    prop: "name",
    type: "string",
    description:
      "Prefix of every resource name: 3-40 lowercase letters, digits or hyphens, starting with a letter, not ending in -authorizer, -cleaner, -dynamodb, -stream or -worker (names of another instance's resources)",
    validation: [
      {
        condition: `can(regex(${hcl(NAME_PATTERN)}, var.name))`,
        message:
          "Invalid name: expected 3-40 lowercase letters, digits or hyphens, starting with a letter.",
      },
      {
        condition: `!can(regex(${hcl(RESERVED_NAME_ENDING_PATTERN)}, var.name))`,
        message: `Invalid name: expected ${RESERVED_NAME_ENDING_RULE}.`,
      },
    ],
  },
  image_uri: {
    prop: "imageUri",
    type: "string",
    description:
      "Container image of the functions, an ECR image pinned by digest (<repository>@sha256:<digest>)",
    validation: [
      {
        condition: `can(regex(${hcl(IMAGE_URI_PATTERN)}, var.image_uri))`,
        message:
          "Invalid image_uri: expected an ECR image pinned by digest (<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex digits>).",
      },
    ],
  },
  image_command: {
    prop: "imageCommand",
    type: "list(string)",
    description:
      "CMD of the API function (the worker always runs worker.handler, the stream function stream.handler, the cleaner cleaner.handler)",
    default: [...DEFAULTS.imageCommand],
    validation: [
      {
        condition: "length(var.image_command) > 0",
        message: "Invalid image_command: expected at least one element.",
      },
    ],
  },
  image_entry_point: {
    prop: "imageEntryPoint",
    type: "list(string)",
    description: "ENTRYPOINT override of every function (default: the image's)",
    default: null,
  },
  architecture: {
    prop: "architecture",
    type: "string",
    description: "Instruction set of the image",
    default: DEFAULTS.architecture,
    validation: [
      {
        condition: `contains(${JSON.stringify(ARCHITECTURES)}, var.architecture)`,
        message: `Invalid architecture: expected one of ${ARCHITECTURES.join(", ")}.`,
      },
    ],
  },
  memory_size: {
    prop: "memorySize",
    type: "number",
    description: "Memory of the API function in MB (and of the worker, unless worker_memory_size)",
    default: DEFAULTS.memorySize,
    validation: [
      {
        condition: `var.memory_size >= ${MEMORY_SIZE_MB.min} && var.memory_size <= ${MEMORY_SIZE_MB.max}`,
        message: `Invalid memory_size: expected ${MEMORY_SIZE_MB.min} to ${MEMORY_SIZE_MB.max} MB.`,
      },
    ],
  },
  timeout: {
    prop: "timeout",
    type: "number",
    description: `Timeout of the API function in seconds, at most ${MAX_API_TIMEOUT_SECONDS} (API Gateway stops waiting at 30 s)`,
    default: DEFAULTS.timeout,
    validation: [
      {
        condition: `var.timeout >= 1 && var.timeout <= ${MAX_API_TIMEOUT_SECONDS} && floor(var.timeout) == var.timeout`,
        message: `Invalid timeout: expected a whole number of seconds from 1 to ${MAX_API_TIMEOUT_SECONDS}.`,
      },
    ],
  },
  reserved_concurrent_executions: {
    prop: "reservedConcurrentExecutions",
    type: "number",
    description: "Reserved concurrency of the API function (caps cost and DynamoDB load)",
    default: DEFAULTS.reservedConcurrentExecutions,
    validation: [
      {
        condition: "var.reserved_concurrent_executions >= 1",
        message: "Invalid reserved_concurrent_executions: expected at least 1.",
      },
    ],
  },
} satisfies Record<string, OptionSpec>;

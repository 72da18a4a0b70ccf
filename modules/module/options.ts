import { ACCOUNT_OPTIONS } from "./options/account";
import { DATA_OPTIONS } from "./options/data";
import { FUNCTION_OPTIONS } from "./options/function";
import { GRAPH_OPTIONS } from "./options/graphs";
import { RELEASE_OPTIONS } from "./options/release";
import { RUN_OPTIONS } from "./options/runs";

/**
 * The module's interface, one spec per option (options/ groups them by concern): the variables, their
 * validations, the README's inputs table and the construct's props are all generated from it. The order is the
 * variables' order in variables.tf.json.
 */
export const OPTIONS = {
  ...FUNCTION_OPTIONS,
  ...RUN_OPTIONS,
  ...GRAPH_OPTIONS,
  ...DATA_OPTIONS,
  ...RELEASE_OPTIONS,
  ...ACCOUNT_OPTIONS,
};

export type OptionName = keyof typeof OPTIONS;

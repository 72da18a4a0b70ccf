/**
 * `memory-table/examples`: the example graphs every guide and test uses (booking, preferences, support chat), and
 * an example of LangGraph auth handlers (`teamAuth`), exported for trying things out.
 */
export { teamAuth, THREADS_ADMIN_SCOPE } from "./auth";
export {
  buildBookingGraph,
  BookingState,
  type BookingApprovalRequest,
  type BookingDecision,
  type BookingGraphOptions,
  type BookingStateValues,
} from "./booking";
export {
  buildPreferencesGraph,
  preferenceNamespace,
  PreferencesState,
  PREFERENCE_KEY,
  type PreferencesGraphOptions,
  type PreferencesStateValues,
  type StoredPreference,
} from "./preferences";
export {
  buildSupportChatGraph,
  type RefundApprovalRequest,
  type RefundDecision,
  type RefundOutcome,
  type SupportChatGraphOptions,
} from "./support-chat";

/** `memory-table/examples`: the booking graph every guide and test uses, exported for trying things out. */
export {
  buildBookingGraph,
  BookingState,
  type BookingApprovalRequest,
  type BookingDecision,
  type BookingGraphOptions,
  type BookingStateValues,
} from "./booking";

import { LocalLegs } from "../../../src/runtime/runs/local-legs";

describe("LocalLegs: cancels reaching the legs of this process", () => {
  it("stops a leg running here at once, and says so", () => {
    const legs = new LocalLegs(() => 0);
    const controller = legs.start("run-1");
    expect(legs.stop("run-1", "rollback")).toBe(true);
    expect(controller.signal.aborted).toBe(true);
    expect(controller.signal.reason).toBe("rollback");
  });

  it("keeps a cancel that arrives between a claim and the leg's start, and aborts the leg as it starts", () => {
    const legs = new LocalLegs(() => 0);
    expect(legs.stop("run-2", "interrupt")).toBe(false);
    const controller = legs.start("run-2");
    expect(controller.signal.reason).toBe("interrupt");
    // Used once: a later leg of the same run starts clean.
    legs.end("run-2");
    expect(legs.start("run-2").signal.aborted).toBe(false);
  });

  it("forgets early cancels after a while, so runs that never start here leave nothing behind", () => {
    let now = 0;
    const legs = new LocalLegs(() => now);
    legs.stop("elsewhere", "rollback");
    now = 60_000;
    legs.stop("another", "interrupt");
    expect(legs.start("elsewhere").signal.aborted).toBe(false);
    expect(legs.start("another").signal.reason).toBe("interrupt");
  });

  it("a leg that ended is not stopped by a late cancel", () => {
    const legs = new LocalLegs(() => 0);
    const controller = legs.start("run-3");
    legs.end("run-3");
    expect(legs.stop("run-3", "interrupt")).toBe(false);
    expect(controller.signal.aborted).toBe(false);
  });

  it("says a run runs here from when a job here expects it until its leg ends", () => {
    const legs = new LocalLegs(() => 0);
    expect(legs.runsHere("run-4")).toBe(false);
    const release = legs.expect("run-4");
    expect(legs.runsHere("run-4")).toBe(true);
    legs.start("run-4");
    release();
    expect(legs.runsHere("run-4")).toBe(true);
    legs.end("run-4");
    expect(legs.runsHere("run-4")).toBe(false);
  });
});

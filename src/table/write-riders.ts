interface Rider<Request> {
  request: Request;
  resolve: () => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * Writes that need not go out at once (a run's record when its leg starts) wait, at most `maxWaitMs`, for the
 * table's next BatchWriteItem and go out inside it: one request instead of two. The leg's first checkpoint is
 * usually that next write, a few milliseconds later. A rider's promise settles with the request that carried it;
 * a rider whose key the next batch also writes goes out alone first, so the two keep their order (and a batch
 * never names one key twice, which DynamoDB refuses).
 */
export class WriteRiders<Request> {
  private readonly waiting: Array<Rider<Request>> = [];

  constructor(
    /** Sends a batch write without taking riders (the table's plain BatchWriteItem). */
    private readonly send: (requests: Request[]) => Promise<void>,
    /** The item a request writes, as a string (two requests for one item never share a batch). */
    private readonly keyOf: (request: Request) => string,
    private readonly maxWaitMs: number,
  ) {}

  /** Writes `request` with the next batch write, or on its own after `maxWaitMs`. */
  add(request: Request): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const rider: Rider<Request> = {
        request,
        resolve,
        reject,
        timer: setTimeout(() => this.sendAlone([rider]), this.maxWaitMs),
      };
      this.waiting.push(rider);
    });
  }

  /**
   * Sends `requests` with the riders that fit beside them (the batch limit), after sending alone any rider whose
   * key `requests` also writes.
   */
  async carry(requests: Request[], limit: number): Promise<void> {
    if (this.waiting.length === 0) return this.send(requests);
    const keys = new Set(requests.map(this.keyOf));
    const clashing = this.take((rider) => keys.has(this.keyOf(rider.request)), Infinity);
    if (clashing.length > 0) await this.sendAlone(clashing);
    // Riders fill the room left in the last BatchWriteItem the requests already need (no extra request).
    const room = requests.length % limit === 0 ? 0 : limit - (requests.length % limit);
    const riders = this.take(() => true, room);
    if (riders.length === 0) return this.send(requests);
    try {
      await this.send([...requests, ...riders.map((rider) => rider.request)]);
    } catch (error) {
      for (const rider of riders) rider.reject(error);
      throw error;
    }
    for (const rider of riders) rider.resolve();
  }

  private take(matches: (rider: Rider<Request>) => boolean, most: number): Array<Rider<Request>> {
    const taken: Array<Rider<Request>> = [];
    for (let index = 0; index < this.waiting.length && taken.length < most;) {
      const rider = this.waiting[index]!;
      if (matches(rider)) {
        clearTimeout(rider.timer);
        taken.push(rider);
        this.waiting.splice(index, 1);
      } else {
        index += 1;
      }
    }
    return taken;
  }

  private async sendAlone(riders: Array<Rider<Request>>): Promise<void> {
    for (const rider of riders) {
      clearTimeout(rider.timer);
      const index = this.waiting.indexOf(rider);
      if (index >= 0) this.waiting.splice(index, 1);
    }
    try {
      await this.send(riders.map((rider) => rider.request));
      for (const rider of riders) rider.resolve();
    } catch (error) {
      for (const rider of riders) rider.reject(error);
    }
  }
}

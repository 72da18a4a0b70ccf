import type { ChannelVersions, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { EncodedPayload } from "../../table/checkpoint-items";
import { decodeBytes, encodeValue, type Compression } from "./codec";
import type { NewValue } from "./write-planner";

/** LangGraph's serializer and the payload codec together: values to stored payloads and back. */
export class PayloadSerializer {
  constructor(
    private readonly serde: SerializerProtocol,
    readonly compression: Compression,
  ) {}

  /** The stored payload of a value, and its serialized size before compression (what the byte limits count). */
  async encode(value: unknown) {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return { payload: encodeValue(type, bytes, this.compression), raw: bytes.byteLength };
  }

  async encodeValues(
    channelValues: Record<string, unknown>,
    channels: string[],
    versions: ChannelVersions,
  ): Promise<{ values: NewValue[]; raw: number }> {
    let raw = 0;
    const values = await Promise.all(
      channels.map(async (channel) => {
        const encoded = await this.encode(channelValues[channel]);
        raw += encoded.raw;
        return { channel, version: String(versions[channel]), payload: encoded.payload };
      }),
    );
    return { values, raw };
  }

  decode(value: Pick<EncodedPayload, "t" | "z" | "v">): Promise<unknown> {
    return this.serde.loadsTyped(value.t, decodeBytes(value));
  }
}

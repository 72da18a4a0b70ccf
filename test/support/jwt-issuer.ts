import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type KeyLike } from "jose";

/**
 * A JWT issuer on 127.0.0.1: an RS256 key pair whose public half it serves at `/.well-known/jwks.json`, as an
 * issuer publishes it, so the code under test verifies tokens with real jose against a real key set fetch.
 */
export interface LoopbackIssuer {
  /** The issuer URL (`iss`), whose `/.well-known/jwks.json` serves the key set. */
  url: string;
  /** Signs tokens the issuer's key set verifies (key id `k1`). */
  privateKey: KeyLike;
  /** Key set requests served so far. */
  readonly keySetRequests: number;
  stop(): Promise<void>;
}

export async function startLoopbackIssuer(): Promise<LoopbackIssuer> {
  const pair = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  let keySetRequests = 0;
  const server: Server = createServer((request, response) => {
    if (request.url === "/.well-known/jwks.json") {
      keySetRequests += 1;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ keys: [jwk] }));
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    privateKey: pair.privateKey,
    get keySetRequests() {
      return keySetRequests;
    },
    async stop() {
      // jose fetches the key set over a keep-alive connection: end it, or close() waits for its timeout.
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

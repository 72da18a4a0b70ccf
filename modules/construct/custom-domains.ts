import type { Construct } from "constructs";
import { ApiDomain } from "./domain";
import type { Flag } from "./expressions";
import type { MemoryTableProps } from "./props";
import { StreamDomain } from "./stream-domain";

/** What the custom domains attach to: the HTTP API's stage and the stream function's URL. */
export interface CustomDomainTargets {
  region: string;
  apiId: string;
  stageId: string;
  createStream: Flag;
  streamUrl: string;
  tags: Record<string, string>;
}

/**
 * The custom domains the props ask for: the API's (a regional API Gateway domain name) and the stream URL's (a
 * CloudFront distribution), each only with its domain name and certificate.
 */
export function createCustomDomains(
  scope: Construct,
  props: MemoryTableProps,
  targets: CustomDomainTargets,
): { api?: ApiDomain; stream?: StreamDomain } {
  const domains: { api?: ApiDomain; stream?: StreamDomain } = {};
  if (props.apiDomainName !== undefined && props.apiCertificateArn !== undefined) {
    domains.api = new ApiDomain(scope, "api", {
      domainName: props.apiDomainName,
      certificateArn: props.apiCertificateArn,
      region: targets.region,
      apiId: targets.apiId,
      stageId: targets.stageId,
      tags: targets.tags,
    });
  }
  if (props.streamDomainName !== undefined && props.streamCertificateArn !== undefined) {
    domains.stream = new StreamDomain(scope, "stream_domain", {
      name: props.name,
      createStream: targets.createStream,
      domainName: props.streamDomainName,
      certificateArn: props.streamCertificateArn,
      webAclArn: props.streamWebAclArn,
      functionUrl: targets.streamUrl,
      tags: targets.tags,
    });
  }
  return domains;
}

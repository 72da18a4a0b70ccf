import { TerraformStack, Testing } from "../../modules/cdktf";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { MemoryTable } from "../../modules/construct/memory-table";
import type { MemoryTableProps } from "../../modules/construct/props";
import { ROUTES } from "../../src/runtime/http/routes";
import { SSE_KEEP_ALIVE_MS } from "../../src/shared/limits";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { expectSecurityBar } from "./support/security-bar";
import { useScratchOutdir } from "./support/outdir";
import { onlyResource, resourcesOf, synthesize } from "./support/synthesized";

/**
 * The construct's custom domains beyond the API's own (construct.test.ts): the stream URL's CloudFront
 * distribution (`streamDomainName`) and the API without its default endpoint (`apiDisableDefaultEndpoint`), as a
 * CDKTF user builds them with literal props. terraform test (stream-domain.tftest.hcl) covers the HCL module.
 */

const outdir = useScratchOutdir();
const IMAGE_URI =
  "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const STREAM_CERTIFICATE =
  "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d";
const API_CERTIFICATE =
  "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d";
const WEB_ACL =
  "arn:aws:wafv2:us-east-1:123456789012:global/webacl/agents-stream/a1b2c3d4-5678-90ab-cdef-0123456789ab";

function build(props: Partial<MemoryTableProps> = {}): TerraformStack {
  const stack = new TerraformStack(Testing.app({ outdir: outdir() }), "test");
  new AwsProvider(stack, "aws", { region: "eu-west-1" });
  new MemoryTable(stack, "agents", {
    name: "agents",
    imageUri: IMAGE_URI,
    accountId: "123456789012",
    ...props,
  });
  return stack;
}

/** The message a construct throws, or "" when it builds. */
function errorOf(props: Partial<MemoryTableProps>): string {
  try {
    build(props);
    return "";
  } catch (error) {
    return error instanceof InvalidConfigurationError ? error.message : String(error);
  }
}

const STREAM_DOMAIN = {
  streamDomainName: "stream.example.com",
  streamCertificateArn: STREAM_CERTIFICATE,
};

describe("custom domains of the construct (synth)", () => {
  it("creates no distribution without a stream domain, and keeps the API's default endpoint", () => {
    const synthesized = synthesize(build());
    expect(resourcesOf(synthesized, "aws_cloudfront_distribution")).toEqual([]);
    const [, api] = onlyResource(synthesized, "aws_apigatewayv2_api");
    expect(api.disable_execute_api_endpoint).toBe(false);
  });

  it("puts a CloudFront distribution in front of the stream URL: its host as the one origin, nothing cached or compressed, every viewer header but Host forwarded", () => {
    const synthesized = synthesize(build({ ...STREAM_DOMAIN, tags: { team: "agents" } }));
    const [urlName] = onlyResource(synthesized, "aws_lambda_function_url");
    const [, distribution] = onlyResource(synthesized, "aws_cloudfront_distribution");
    expect(distribution).toMatchObject({
      count: 1,
      enabled: true,
      aliases: ["stream.example.com"],
      http_version: "http2and3",
      is_ipv6_enabled: true,
      tags: { team: "agents" },
      origin: [
        {
          // https://<host>/ -> <host>
          domain_name: `\${element(split("/", one(aws_lambda_function_url.${urlName}[*].function_url)), 2)}`,
          custom_origin_config: {
            http_port: 80,
            https_port: 443,
            origin_protocol_policy: "https-only",
            origin_ssl_protocols: ["TLSv1.2"],
            origin_read_timeout: 60,
            origin_keepalive_timeout: 60,
          },
        },
      ],
      default_cache_behavior: {
        viewer_protocol_policy: "https-only",
        allowed_methods: ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"],
        cached_methods: ["GET", "HEAD"],
        compress: false,
        // Managed-CachingDisabled and Managed-AllViewerExceptHostHeader.
        cache_policy_id: "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
        origin_request_policy_id: "b689b0a8-53d0-40ab-baf2-68738e2966ac",
      },
      restrictions: { geo_restriction: { restriction_type: "none" } },
      viewer_certificate: {
        acm_certificate_arn: STREAM_CERTIFICATE,
        ssl_support_method: "sni-only",
        minimum_protocol_version: "TLSv1.2_2021",
      },
    });
    const [origin] = distribution.origin as Record<string, unknown>[];
    expect(origin!.origin_id).toBe(
      (distribution.default_cache_behavior as { target_origin_id: string }).target_origin_id,
    );
    // No origin access control: for a Lambda origin it would sign with SigV4 in the Authorization header.
    expect(origin).not.toHaveProperty("origin_access_control_id");
    expect(distribution).not.toHaveProperty("web_acl_id");
    expectSecurityBar(synthesized);
  });

  it("allows every method a route of the API uses", () => {
    const synthesized = synthesize(build(STREAM_DOMAIN));
    const [, distribution] = onlyResource(synthesized, "aws_cloudfront_distribution");
    const allowed = (distribution.default_cache_behavior as { allowed_methods: string[] })
      .allowed_methods;
    for (const method of new Set(ROUTES.map((route) => route.method))) {
      expect({ method, allowed: allowed.includes(method) }).toEqual({ method, allowed: true });
    }
  });

  it("waits for a response's next byte at least twice the runtime's SSE keep-alive interval", () => {
    const synthesized = synthesize(build(STREAM_DOMAIN));
    const [, distribution] = onlyResource(synthesized, "aws_cloudfront_distribution");
    const [origin] = distribution.origin as { custom_origin_config: Record<string, number> }[];
    const readTimeoutMs = origin!.custom_origin_config.origin_read_timeout! * 1000;
    // A quiet stream gets a keep-alive comment every SSE_KEEP_ALIVE_MS; a late one must still arrive in time.
    expect(SSE_KEEP_ALIVE_MS * 2).toBeLessThanOrEqual(readTimeoutMs);
  });

  it("attaches a web ACL when given one", () => {
    const synthesized = synthesize(build({ ...STREAM_DOMAIN, streamWebAclArn: WEB_ACL }));
    const [, distribution] = onlyResource(synthesized, "aws_cloudfront_distribution");
    expect(distribution.web_acl_id).toBe(WEB_ACL);
  });

  it("turns the API's default endpoint off with a custom domain", () => {
    const synthesized = synthesize(
      build({
        apiDomainName: "agents.example.com",
        apiCertificateArn: API_CERTIFICATE,
        apiDisableDefaultEndpoint: true,
      }),
    );
    const [, api] = onlyResource(synthesized, "aws_apigatewayv2_api");
    expect(api.disable_execute_api_endpoint).toBe(true);
    expect(resourcesOf(synthesized, "aws_apigatewayv2_api_mapping")).toHaveLength(1);
  });

  it.each([
    [
      { streamDomainName: "stream.example.com" },
      /^Invalid stream_certificate_arn: expected stream_domain_name and stream_certificate_arn together .*got only stream_domain_name$/,
    ],
    [
      { streamCertificateArn: STREAM_CERTIFICATE },
      /^Invalid stream_certificate_arn: expected stream_domain_name and stream_certificate_arn together .*got only stream_certificate_arn$/,
    ],
    [
      { ...STREAM_DOMAIN, streamDomainName: "https://stream.example.com" },
      /^Invalid stream_domain_name: expected a lowercase domain name/,
    ],
    [
      { ...STREAM_DOMAIN, streamCertificateArn: "arn:aws:iam::123456789012:server-certificate/x" },
      /^Invalid stream_certificate_arn: expected an ACM certificate ARN/,
    ],
    [
      { ...STREAM_DOMAIN, streamCertificateArn: API_CERTIFICATE },
      /^Invalid stream_certificate_arn: expected an ACM certificate in us-east-1 .*got one in eu-west-1$/,
    ],
    [
      { ...STREAM_DOMAIN, createStreamFunction: false },
      /^Invalid stream_domain_name: expected create_stream_function = true with it/,
    ],
    [
      { streamWebAclArn: WEB_ACL },
      /^Invalid stream_web_acl_arn: expected stream_domain_name with it/,
    ],
    [
      { ...STREAM_DOMAIN, streamWebAclArn: WEB_ACL.replace("us-east-1", "eu-west-1") },
      /^Invalid stream_web_acl_arn: expected the ARN of a WAFv2 web ACL of scope CLOUDFRONT/,
    ],
    [
      { apiDisableDefaultEndpoint: true },
      /^Invalid api_disable_default_endpoint: expected api_domain_name with it/,
    ],
  ] as [Partial<MemoryTableProps>, RegExp][])("refuses %j", (props, error) => {
    expect(errorOf(props)).toMatch(error);
  });
});

import { Construct } from "constructs";
import { Fn, Op, propertyAccess, Token } from "../cdktf";
import { CloudfrontDistribution } from "@cdktf/provider-aws/lib/cloudfront-distribution";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { assertDomainInputs, given } from "./domain";
import { attributeOf, both, countIf, type Flag } from "./expressions";
import { isLiteral } from "./rules";

/** CloudFront serves certificates of this region only, whatever the region of the rest of the module. */
export const CLOUDFRONT_CERTIFICATE_REGION = "us-east-1";
/** A WAFv2 web ACL of scope CLOUDFRONT (those live in us-east-1, under `global/`). */
export const CLOUDFRONT_WEB_ACL_ARN_PATTERN =
  "^arn:aws[a-z-]*:wafv2:us-east-1:[0-9]{12}:global/webacl/[A-Za-z0-9_-]{1,128}/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/**
 * The managed policies of the stream behaviour, by id (the same in every account). CachingDisabled: every request
 * reaches the function, and nothing of one caller's answers is served to another. AllViewerExceptHostHeader:
 * every viewer header reaches it, `Authorization` and `X-Api-Key` (the credential the function verifies) and
 * `Origin` (its CORS) included, but not `Host`, which must stay the URL's own or the URL answers 403. CloudFront
 * refuses `Authorization` in an origin request policy that lists headers; the all-viewer policies forward it.
 */
export const CACHING_DISABLED_POLICY_ID = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad";
export const ALL_VIEWER_EXCEPT_HOST_HEADER_POLICY_ID = "b689b0a8-53d0-40ab-baf2-68738e2966ac";

/**
 * Seconds CloudFront waits for the next byte of a response, and keeps an idle origin connection: 60 is the most
 * without a quota increase. A stream that goes quiet longer is cut, so the runtime's keep-alive comment
 * (SSE_KEEP_ALIVE_MS of src/shared/limits.ts, 15 s) must come well within it: a test holds it to half at most.
 */
export const STREAM_ORIGIN_READ_TIMEOUT_SECONDS = 60;
export const STREAM_ORIGIN_KEEPALIVE_TIMEOUT_SECONDS = 60;
/** CloudFront's viewer security policy: TLS 1.2 at least, with the 2021 ciphers. */
export const CLOUDFRONT_SECURITY_POLICY = "TLSv1.2_2021";
const ORIGIN_ID = "stream-url";
/**
 * CloudFront allows one of three method sets; the API's routes use POST, PATCH and DELETE, which only the full
 * set has (a test holds it to ROUTES).
 */
export const STREAM_ALLOWED_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];

export interface StreamDomainProps {
  name: string;
  /** Whether the stream function exists: the distribution's origin is its URL. */
  createStream: Flag;
  domainName: string;
  /** An ACM certificate in us-east-1 (a precondition, checked at plan once the ARN is known). */
  certificateArn: string;
  /** A WAFv2 web ACL of scope CLOUDFRONT (optional). */
  webAclArn?: string;
  /** The stream function's URL, `https://<id>.lambda-url.<region>.on.aws/`. */
  functionUrl: string;
  tags: Record<string, string>;
}

/**
 * A custom domain for the stream function's URL: a Lambda function URL takes none, so a CloudFront distribution
 * with the URL as its only origin serves the name. A distribution is global, created through the module's own
 * provider in any region; only its certificate must be in us-east-1, and the consumer brings it by ARN. Streaming
 * passes through unbuffered: no caching, no compression (each would hold Server-Sent Events back), and the origin
 * read timeout above the keep-alive interval. No origin access control: for a Lambda origin it signs the origin
 * request with SigV4 in the `Authorization` header, where the caller's bearer token must arrive; the function
 * authenticates every request itself, and the URL keeps answering directly. In the HCL module everything here has
 * `count`, decided by the domain name, which must be known at plan (the certificate's ARN need not be).
 */
export class StreamDomain extends Construct {
  readonly enabled: Flag;
  readonly distribution: CloudfrontDistribution;
  /** `https://<domain>`, and what the DNS record points at (null without a domain). */
  readonly url: string;
  readonly targetDomainName: string;
  readonly hostedZoneId: string;
  readonly distributionId: string;
  readonly distributionArn: string;

  constructor(scope: Construct, id: string, props: StreamDomainProps) {
    super(scope, id);
    this.enabled = both(given(props.domainName), props.createStream);
    const certificateArn = props.certificateArn;
    this.distribution = new CloudfrontDistribution(this, "distribution", {
      count: countIf(this.enabled),
      enabled: true,
      comment: `Memory Table stream function URL of ${props.name}`,
      aliases: [props.domainName],
      isIpv6Enabled: true,
      httpVersion: "http2and3",
      origin: [
        {
          originId: ORIGIN_ID,
          // https://<host>/ -> <host>
          domainName: Token.asString(Fn.element(Fn.split("/", props.functionUrl), 2)),
          customOriginConfig: {
            httpPort: 80,
            httpsPort: 443,
            originProtocolPolicy: "https-only",
            originSslProtocols: ["TLSv1.2"],
            originReadTimeout: STREAM_ORIGIN_READ_TIMEOUT_SECONDS,
            originKeepaliveTimeout: STREAM_ORIGIN_KEEPALIVE_TIMEOUT_SECONDS,
          },
        },
      ],
      defaultCacheBehavior: {
        targetOriginId: ORIGIN_ID,
        // Not redirect-to-https: a redirect answers after the token went out in the clear, and clients turn a
        // redirected POST into a GET; a refusal makes the wrong URL fail at once. The function URL is https-only too.
        viewerProtocolPolicy: "https-only",
        allowedMethods: STREAM_ALLOWED_METHODS,
        cachedMethods: ["GET", "HEAD"],
        compress: false,
        cachePolicyId: CACHING_DISABLED_POLICY_ID,
        originRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER_POLICY_ID,
      },
      restrictions: { geoRestriction: { restrictionType: "none" } },
      viewerCertificate: {
        acmCertificateArn: certificateArn,
        sslSupportMethod: "sni-only",
        minimumProtocolVersion: CLOUDFRONT_SECURITY_POLICY,
      },
      webAclId: props.webAclArn,
      tags: props.tags,
      lifecycle: {
        precondition: [
          {
            // arn:<partition>:acm:<region>:...: field 3 is the certificate's region.
            condition: Op.eq(
              Fn.element(Fn.split(":", certificateArn), 3),
              CLOUDFRONT_CERTIFICATE_REGION,
            ),
            errorMessage: `Invalid stream_certificate_arn: expected an ACM certificate in ${CLOUDFRONT_CERTIFICATE_REGION} (CloudFront serves certificates of ${CLOUDFRONT_CERTIFICATE_REGION} only).`,
          },
        ],
      },
    });
    this.targetDomainName = attributeOf(this.distribution, "domain_name");
    this.hostedZoneId = attributeOf(this.distribution, "hosted_zone_id");
    this.distributionId = attributeOf(this.distribution, "id");
    this.distributionArn = attributeOf(this.distribution, "arn");
    // From the distribution (null without it): aliases is a set, one per distribution.
    this.url = Token.asString(
      Fn.one(
        Fn.formatlist("https://%s", [
          Fn.flatten(Token.asList(propertyAccess(this.distribution.fqn, ["*", "aliases"]))),
        ]),
      ),
    );
  }
}

/** Both or neither, each of its shape, the certificate in us-east-1: what the HCL module's validations check too. */
export function assertStreamDomain(props: {
  streamDomainName?: string;
  streamCertificateArn?: string;
  streamWebAclArn?: string;
  createStreamFunction?: Flag;
}): void {
  const domainName = props.streamDomainName;
  const certificateArn = props.streamCertificateArn;
  assertDomainInputs("stream", domainName, certificateArn, CLOUDFRONT_CERTIFICATE_REGION);
  if (domainName !== undefined && props.createStreamFunction === false) {
    throw new InvalidConfigurationError(
      "stream_domain_name",
      "expected create_stream_function = true with it (the distribution's origin is the stream function's URL), got false",
    );
  }
  if (certificateArn !== undefined && isLiteral(certificateArn)) {
    const region = certificateArn.split(":")[3];
    if (region !== CLOUDFRONT_CERTIFICATE_REGION) {
      throw new InvalidConfigurationError(
        "stream_certificate_arn",
        `expected an ACM certificate in ${CLOUDFRONT_CERTIFICATE_REGION} (CloudFront serves certificates of ${CLOUDFRONT_CERTIFICATE_REGION} only), got one in ${region}`,
      );
    }
  }
  assertWebAcl(props.streamWebAclArn, domainName);
}

function assertWebAcl(webAclArn: string | undefined, domainName: string | undefined): void {
  if (webAclArn === undefined) return;
  if (domainName === undefined) {
    throw new InvalidConfigurationError(
      "stream_web_acl_arn",
      "expected stream_domain_name with it (the web ACL protects the stream domain's distribution), got none",
    );
  }
  if (isLiteral(webAclArn) && !new RegExp(CLOUDFRONT_WEB_ACL_ARN_PATTERN).test(webAclArn)) {
    throw new InvalidConfigurationError(
      "stream_web_acl_arn",
      `expected the ARN of a WAFv2 web ACL of scope CLOUDFRONT (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>), got ${JSON.stringify(webAclArn)}`,
    );
  }
}

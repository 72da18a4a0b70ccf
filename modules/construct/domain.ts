import { Construct } from "constructs";
import { Fn, Op, propertyAccess, Token } from "../cdktf";
import { Apigatewayv2ApiMapping } from "@cdktf/provider-aws/lib/apigatewayv2-api-mapping";
import { Apigatewayv2DomainName } from "@cdktf/provider-aws/lib/apigatewayv2-domain-name";
import { InvalidConfigurationError } from "../../src/shared/errors";
import { countIf, type Flag } from "./expressions";
import { isLiteral } from "./rules";

/** A lowercase fully qualified domain name (API Gateway stores custom domain names lowercase). */
export const DOMAIN_NAME_PATTERN = "^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$";
/** An ACM certificate by its ARN (a UUID after `certificate/`). */
export const CERTIFICATE_ARN_PATTERN =
  "^arn:aws[a-z-]*:acm:[a-z0-9-]+:[0-9]{12}:certificate/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
/** The security policy of the domain: TLS 1.2 at least (API Gateway's other choice, TLS 1.0, is weaker). */
export const DOMAIN_SECURITY_POLICY = "TLS_1_2";

export interface ApiDomainProps {
  /** The custom domain (null at plan: nothing created). */
  domainName: string;
  /** Its ACM certificate, in the API's region (a regional endpoint serves the certificate of its own region). */
  certificateArn: string;
  /** The region the API is in, which the certificate's must be (a precondition, checked at plan). */
  region: string;
  apiId: string;
  stageId: string;
  tags: Record<string, string>;
}

/**
 * A custom domain for the HTTP API: a regional domain name with TLS 1.2 and the given ACM certificate, mapped to
 * the `$default` stage. The consumer points its DNS at `targetDomainName` (an alias record in `hostedZoneId`).
 * The construct creates it only when given a domain name; in the HCL module everything here has `count`, decided
 * by the domain name, which must be known at plan (the certificate's ARN need not be: it may come from an
 * `aws_acm_certificate` of the same apply).
 */
export class ApiDomain extends Construct {
  readonly enabled: Flag;
  readonly domainName: Apigatewayv2DomainName;
  readonly mapping: Apigatewayv2ApiMapping;
  /** What the DNS record points at, and the hosted zone of that target (null without a domain). */
  readonly targetDomainName: string;
  readonly hostedZoneId: string;
  /** `https://<domain>` (null without a domain). */
  readonly url: string;

  constructor(scope: Construct, id: string, props: ApiDomainProps) {
    super(scope, id);
    this.enabled = given(props.domainName);
    const count = countIf(this.enabled);
    const certificateArn = props.certificateArn;
    this.domainName = new Apigatewayv2DomainName(this, "domain_name", {
      count,
      domainName: props.domainName,
      domainNameConfiguration: {
        certificateArn,
        endpointType: "REGIONAL",
        securityPolicy: DOMAIN_SECURITY_POLICY,
      },
      tags: props.tags,
      lifecycle: {
        precondition: [
          {
            // arn:<partition>:acm:<region>:...: field 3 is the certificate's region.
            condition: Op.eq(Fn.element(Fn.split(":", certificateArn), 3), props.region),
            errorMessage:
              "Invalid api_certificate_arn: expected an ACM certificate in the API's region (a regional custom domain serves a certificate of its own region).",
          },
        ],
      },
    });
    const configuration = (attribute: string) =>
      Token.asString(
        Fn.one(
          propertyAccess(this.domainName.fqn, ["*", "domain_name_configuration", 0, attribute]),
        ),
      );
    this.targetDomainName = configuration("target_domain_name");
    this.hostedZoneId = configuration("hosted_zone_id");
    const name = Token.asString(Fn.one(propertyAccess(this.domainName.fqn, ["*", "id"])));
    this.url = Token.asString(
      Fn.one(
        Fn.formatlist("https://%s", [propertyAccess(this.domainName.fqn, ["*", "domain_name"])]),
      ),
    );
    this.mapping = new Apigatewayv2ApiMapping(this, "mapping", {
      count,
      apiId: props.apiId,
      domainName: name,
      stage: props.stageId,
    });
  }
}

/** Whether a value is given: a literal, or at plan `compact` (which drops null). */
export function given(value: string): Flag {
  if (isLiteral(value)) return true;
  return Op.gte(Fn.lengthOf(Token.asList(Fn.compact([value]))), 1);
}

/**
 * Both or neither, each of its shape, and a domain when the default endpoint is off: what the HCL module's
 * validations check too.
 */
export function assertApiDomain(
  domainName?: string,
  certificateArn?: string,
  disableDefaultEndpoint?: Flag,
): void {
  if (disableDefaultEndpoint === true && domainName === undefined) {
    throw new InvalidConfigurationError(
      "api_disable_default_endpoint",
      "expected api_domain_name with it (without the default endpoint and a custom domain the API is unreachable), got none",
    );
  }
  assertDomainInputs("api", domainName, certificateArn, "<region>");
}

/**
 * An endpoint's custom domain inputs, `<endpoint>_domain_name` and `<endpoint>_certificate_arn`: both or neither,
 * each of its shape (values known only at apply are checked there). `certificateRegion` is what the message's
 * example ARN shows.
 */
export function assertDomainInputs(
  endpoint: "api" | "stream",
  domainName: string | undefined,
  certificateArn: string | undefined,
  certificateRegion: string,
): void {
  const nameInput = `${endpoint}_domain_name`;
  const certificateInput = `${endpoint}_certificate_arn`;
  if ((domainName === undefined) !== (certificateArn === undefined)) {
    // Named as the HCL module's validation names it (on the certificate's input, which reads both).
    throw new InvalidConfigurationError(
      certificateInput,
      `expected ${nameInput} and ${certificateInput} together (both or neither), got only ${domainName === undefined ? certificateInput : nameInput}`,
    );
  }
  if (
    domainName !== undefined &&
    isLiteral(domainName) &&
    !new RegExp(DOMAIN_NAME_PATTERN).test(domainName)
  ) {
    throw new InvalidConfigurationError(
      nameInput,
      `expected a lowercase domain name like ${endpoint}.example.com, got ${JSON.stringify(domainName)}`,
    );
  }
  if (
    certificateArn !== undefined &&
    isLiteral(certificateArn) &&
    !new RegExp(CERTIFICATE_ARN_PATTERN).test(certificateArn)
  ) {
    throw new InvalidConfigurationError(
      certificateInput,
      `expected an ACM certificate ARN (arn:aws:acm:${certificateRegion}:<account>:certificate/<id>), got ${JSON.stringify(certificateArn)}`,
    );
  }
}

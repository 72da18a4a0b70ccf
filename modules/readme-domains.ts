import { DOMAIN_SECURITY_POLICY } from "./construct/domain";

/** The module README's section on custom domains: the API's, which the module creates, and the stream URL's. */
export function customDomains(): string[] {
  return [
    "## Custom domains",
    "",
    "`api_domain_name` with `api_certificate_arn` (an ACM certificate in the API's region, which may be requested",
    `in the same apply) gives the HTTP API a regional custom domain (security policy \`${DOMAIN_SECURITY_POLICY}\`) mapped to`,
    "its `$default` stage. Both or neither; the domain name must be known at plan, the certificate's region must be",
    "the API's (checked at plan when the ARN is known). The DNS record is yours: point it at the outputs.",
    "",
    "```hcl",
    'resource "aws_route53_record" "api" {',
    "  zone_id = aws_route53_zone.example.zone_id",
    '  name    = "agents.example.com"',
    '  type    = "A"',
    "  alias {",
    "    name                   = module.agents.api_domain_name_target_domain_name",
    "    zone_id                = module.agents.api_domain_name_hosted_zone_id",
    "    evaluate_target_health = false",
    "  }",
    "}",
    "```",
    "",
    "The default endpoint (`api_endpoint`) keeps answering. The stream function's URL takes no custom domain: a",
    "Lambda function URL has none, and the way to give it one, a CloudFront distribution in front of it, is not",
    "created by the module, because what makes it correct (the `Authorization` header reaching the function, and",
    "Server-Sent Events streaming through unbuffered) can only be observed against AWS, which the module's tests",
    "cannot reach. docs/terraform-module.md, Custom domains, gives the distribution to write and what to check.",
    "",
  ];
}

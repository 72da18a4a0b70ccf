import { MODULE_TAG } from "./version";

/**
 * The HCL examples of the module README. A test runs each one against the committed module (`terraform
 * validate`, and `terraform plan` for the offline one), so no example can rot.
 */
export const MODULE_SOURCE = `git::https://github.com/<owner>/memory-table.git//modules/memory-table?ref=${MODULE_TAG}`;

/** A placeholder digest: replace it with the one `scripts/push-image.sh` printed. */
const IMAGE_URI =
  "123456789012.dkr.ecr.eu-west-1.amazonaws.com/memory-table@sha256:0000000000000000000000000000000000000000000000000000000000000000";

export interface ReadmeExample {
  title: string;
  text: string;
  hcl: string;
  /** Planned offline by the test (it declares its own provider with skip flags), not only validated. */
  plannedOffline?: boolean;
}

const moduleHeader = (name = '"agents"', forEach?: string) => `${
  forEach === undefined
    ? `  source = "${MODULE_SOURCE}"`
    : `  source   = "${MODULE_SOURCE}"
  for_each = ${forEach}`
}

  name      = ${name}
  image_uri = "${IMAGE_URI}"`;

export const MODULE_USAGE: ReadmeExample = {
  title: "Usage",
  text: "`name` and a digest-pinned `image_uri` are enough; everything else has a secure default.",
  hcl: `provider "aws" {
  region = "eu-west-1"
}

module "agents" {
${moduleHeader()}
}

output "api_endpoint" {
  value = module.agents.api_endpoint
}

# The whole API again, streamed: the LangGraph SDK's apiUrl.
output "stream_url" {
  value = module.agents.stream_url
}`,
};

export const README_EXAMPLES: ReadmeExample[] = [
  {
    title: "Your own JWT issuer",
    text: "Trust an issuer of yours instead of the module's Cognito user pool. The issuer may come from another resource and be unknown until apply: `create_cognito_user_pool`, not the issuer's value, decides what is created.",
    hcl: `provider "aws" {
  region = "eu-west-1"
}

resource "aws_cognito_user_pool" "users" {
  name = "agents-users"
}

module "agents" {
${moduleHeader()}

  create_cognito_user_pool = false
  jwt_issuer               = "https://cognito-idp.eu-west-1.amazonaws.com/\${aws_cognito_user_pool.users.id}"
  jwt_audience             = ["agents-api"]
}`,
  },
  {
    title: "Several deployments with for_each",
    text: "The module has no provider block, so `for_each` and `count` work; every name it creates starts with `name`, and IAM role names carry the region.",
    hcl: `provider "aws" {
  region = "eu-west-1"
}

locals {
  agents = {
    support = ["https://support.example.com"]
    billing = []
  }
}

module "agents" {
${moduleHeader('"agents-${each.key}"', "local.agents")}

  cors_allow_origins = each.value
}

output "api_endpoints" {
  value = { for key, agent in module.agents : key => agent.api_endpoint }
}`,
  },
  {
    title: "An offline plan",
    text: "`lookup_account_id = false` with `account_id` skips the `aws_caller_identity` lookup, so with placeholder credentials and the provider's skip flags `terraform plan` needs no AWS access (CI, reviews); the module's own tests plan this way.",
    plannedOffline: true,
    hcl: `provider "aws" {
  region                      = "eu-west-1"
  access_key                  = "placeholder"
  secret_key                  = "placeholder"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
}

module "agents" {
${moduleHeader()}

  lookup_account_id = false
  account_id        = "123456789012"
}`,
  },
  {
    title: "What a graph needs: its tools' permissions and its secrets",
    text: "Additional statements and managed policies go to the functions that run graphs, in policies of their own beside the module's least-privilege ones. Secrets are given as ARNs: the functions may read exactly those (and decrypt them with the listed keys, through Secrets Manager or SSM only), and the image sets each variable at cold start, before the graph module loads. Keys of `graph_policy_arns` are names of yours, so an ARN created in the same apply plans.",
    hcl: `provider "aws" {
  region = "eu-west-1"
}

resource "aws_secretsmanager_secret" "openai" {
  name       = "agents/openai"
  kms_key_id = aws_kms_key.secrets.arn
}

resource "aws_kms_key" "secrets" {
  description         = "Secrets of the agents' tools"
  enable_key_rotation = true
}

resource "aws_iam_policy" "search" {
  name = "agents-search"
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = ["es:ESHttpGet"], Resource = ["arn:aws:es:eu-west-1:123456789012:domain/search/*"] }]
  })
}

module "agents" {
${moduleHeader()}

  environment = { GRAPH_MODULE = "graphs/support.mjs", MAX_TOKENS = "4096" }
  secrets = {
    OPENAI_API_KEY = aws_secretsmanager_secret.openai.arn
    DB_PASSWORD    = "arn:aws:ssm:eu-west-1:123456789012:parameter/agents/db-password"
  }
  secrets_kms_key_arns = [aws_kms_key.secrets.arn]

  graph_policy_statements = {
    InvokeModel = {
      actions   = ["bedrock:InvokeModel"]
      resources = ["arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0"]
    }
  }
  graph_policy_arns = { search = aws_iam_policy.search.arn }
}`,
  },
  {
    title: "Background runs: the worker and webhooks",
    text: "Background runs go to the worker function, one leg of up to `worker_timeout` per invocation. Size it for your graphs and your peak of runs running at once; allow the hosts your run webhooks call (none by default).",
    hcl: `provider "aws" {
  region = "eu-west-1"
}

module "agents" {
${moduleHeader()}

  worker_timeout                        = 900
  worker_memory_size                    = 2048
  worker_reserved_concurrent_executions = 50
  max_run_legs                          = 16
  webhook_allowed_hosts                 = ["hooks.example.com", "ci.example.com:8443"]
}`,
  },
  {
    title: "Streaming to a browser app",
    text: "The stream function serves the whole API from `stream_url`, streaming Server-Sent Events as they come, for runs of up to `stream_timeout`: give that URL to the LangGraph SDK (`useStream`, `runs.stream`). Its CORS origins are `cors_allow_origins` unless `stream_cors_allow_origins` says otherwise (`[]`: none). `create_stream_function = false` removes it, and with it the module's only public endpoint that API Gateway does not authorize.",
    hcl: `provider "aws" {
  region = "eu-west-1"
}

module "agents" {
${moduleHeader()}

  cors_allow_origins                    = ["https://app.example.com"]
  stream_cors_allow_origins             = ["https://app.example.com", "http://localhost:5173"]
  stream_timeout                        = 600
  stream_reserved_concurrent_executions = 100
}

output "langgraph_api_url" {
  value = module.agents.stream_url
}`,
  },
  {
    title: "Production: alarms and provisioned concurrency",
    text: "Alarms notify a created topic (KMS-encrypted with a key CloudWatch may use) or `alarm_sns_topic_arn`; every threshold can be overridden. Provisioned concurrency needs a published version: with `publish` the API invokes the alias `alias_name`.",
    hcl: `provider "aws" {
  region = "eu-west-1"
}

module "agents" {
${moduleHeader()}

  create_alarms      = true
  create_alarm_topic = true
  alarm_thresholds   = { runs_failed = 3, api_5xx_rate_percent = 2 }

  publish                           = true
  provisioned_concurrent_executions = 2
}

resource "aws_sns_topic_subscription" "on_call" {
  topic_arn = module.agents.alarm_sns_topic_arn
  protocol  = "email"
  endpoint  = "on-call@example.com"
}`,
  },
];

import { Construct } from "constructs";
import { CognitoUserPool } from "@cdktf/provider-aws/lib/cognito-user-pool";
import { CognitoUserPoolClient } from "@cdktf/provider-aws/lib/cognito-user-pool-client";
import { attributeOf, choose, countIf, Flag } from "./expressions";

/** The Cognito custom attribute that carries the tenant (the `custom:tenant_id` claim of its tokens). */
export const TENANT_ATTRIBUTE = "tenant_id";

/** What the app client may write: never the tenant, or a user could move themselves to another tenant. */
export const CLIENT_WRITE_ATTRIBUTES = ["email"];
export const CLIENT_READ_ATTRIBUTES = ["email", "email_verified", `custom:${TENANT_ATTRIBUTE}`];

export interface UserPoolProps {
  name: string;
  create: Flag;
  deletionProtection: Flag;
  region: string;
  tags: Record<string, string>;
}

/** The default issuer: a user pool whose users get an immutable tenant, set by an administrator only. */
export class UserPool extends Construct {
  readonly userPool: CognitoUserPool;
  readonly client: CognitoUserPoolClient;
  readonly userPoolId: string;
  readonly userPoolArn: string;
  readonly clientId: string;
  /** The JWT issuer of the pool's tokens. */
  readonly issuer: string;

  constructor(scope: Construct, id: string, props: UserPoolProps) {
    super(scope, id);
    const count = countIf(props.create);
    this.userPool = new CognitoUserPool(this, "pool", {
      count,
      name: props.name,
      deletionProtection: choose(props.deletionProtection, "ACTIVE", "INACTIVE"),
      usernameAttributes: ["email"],
      autoVerifiedAttributes: ["email"],
      // A changed email stays unverified (and the old one stays in use) until the user confirms the new one.
      userAttributeUpdateSettings: { attributesRequireVerificationBeforeUpdate: ["email"] },
      mfaConfiguration: "OPTIONAL",
      softwareTokenMfaConfiguration: { enabled: true },
      adminCreateUserConfig: { allowAdminCreateUserOnly: true },
      passwordPolicy: {
        minimumLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireNumbers: true,
        requireSymbols: true,
        temporaryPasswordValidityDays: 3,
      },
      schema: [
        {
          name: TENANT_ATTRIBUTE,
          attributeDataType: "String",
          mutable: false,
          developerOnlyAttribute: false,
          required: false,
          stringAttributeConstraints: { minLength: "1", maxLength: "128" },
        },
      ],
      tags: props.tags,
    });
    this.userPoolId = attributeOf(this.userPool, "id");
    this.userPoolArn = attributeOf(this.userPool, "arn");
    this.client = new CognitoUserPoolClient(this, "client", {
      count,
      name: props.name,
      userPoolId: this.userPoolId,
      generateSecret: false,
      explicitAuthFlows: ["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
      preventUserExistenceErrors: "ENABLED",
      enableTokenRevocation: true,
      readAttributes: CLIENT_READ_ATTRIBUTES,
      writeAttributes: CLIENT_WRITE_ATTRIBUTES,
    });
    this.clientId = attributeOf(this.client, "id");
    this.issuer = `https://cognito-idp.${props.region}.amazonaws.com/${this.userPoolId}`;
  }
}

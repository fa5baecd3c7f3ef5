import { env } from "../env";
import { scopeCatalog } from "./scopes";

/** Which scope each partner procedure needs (the OpenAPI document's `security`). */
export const partnerRouteScopes: Record<string, string> = {
  "partner.campaigns": "campaigns:read",
  "partner.statistics": "statistics:read",
};

/** The OAuth 2.0 security scheme of the partner endpoints. */
export const partnerOAuthScheme = () => ({
  type: "oauth2",
  description:
    "Partner apps: Authorization Code with PKCE (S256), required from every app, confidential ones too. Metadata at /.well-known/oauth-authorization-server.",
  flows: {
    authorizationCode: {
      authorizationUrl: `${env.appUrl}/oauth/authorize`,
      tokenUrl: `${env.appUrl}/api/oauth/token`,
      refreshUrl: `${env.appUrl}/api/oauth/token`,
      scopes: Object.fromEntries(Object.entries(scopeCatalog).map(([s, d]) => [s, d.description])),
    },
  },
});

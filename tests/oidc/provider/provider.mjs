// A real OpenID Connect provider for iowatt's sign-in tests: panva's oidc-provider (OpenID
// Certified), configured with one confidential client and the accounts of a JSON file.
//
// Environment:
//   OIDC_PORT            port to listen on (127.0.0.1); the issuer is http://127.0.0.1:PORT
//   OIDC_CLIENT_ID       the one client's id
//   OIDC_CLIENT_SECRET   its secret (client_secret_basic at the token endpoint)
//   OIDC_REDIRECT_URIS   comma-separated redirect URIs registered for the client
//   OIDC_USERS_FILE      JSON {"<login>": {"email": "...", "email_verified": true, "name": "..."}};
//                        read at every look-up, so a test can change an account between sign-ins.
//                        A login not in the file is an account whose verified e-mail is
//                        <login>@example.test; "email_verified": null leaves the claim out.
//
// The login form is the library's development interaction (any password is accepted): the
// protocol under test (discovery, authorization, PKCE, token, ID token signature, JWKS, userinfo)
// is the library's own. Consent is granted for the client at once (a first-party application).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

import Provider from 'oidc-provider';

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const usersFile = process.env.OIDC_USERS_FILE;

function accountOf(login) {
  let users = {};
  if (usersFile) {
    users = JSON.parse(readFileSync(usersFile, 'utf8'));
  }
  const known = users[login] ?? {};
  const claims = {
    email: known.email ?? `${login}@example.test`,
    email_verified: 'email_verified' in known ? known.email_verified : true,
    name: known.name ?? login,
  };
  if (claims.email_verified === null) {
    delete claims.email_verified; // a provider that does not say (as Microsoft Entra ID)
  }
  return claims;
}

// a fresh RS256 signing key per process (its public half is served at the JWKS endpoint)
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.OIDC_CLIENT_ID,
      client_secret: process.env.OIDC_CLIENT_SECRET,
      redirect_uris: (process.env.OIDC_REDIRECT_URIS ?? '').split(',').filter(Boolean),
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
  },
  // PKCE on every authorization request, confidential client or not: a request without it fails
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  async findAccount(_ctx, sub) {
    return {
      accountId: sub,
      async claims() {
        return { sub, ...accountOf(sub) };
      },
    };
  },
  // first-party client: the grant is given at once, with no consent page
  async loadExistingGrant(ctx) {
    const { client, session } = ctx.oidc;
    const grantId = ctx.oidc.result?.consent?.grantId || session.grantIdFor(client.clientId);
    if (grantId) {
      return ctx.oidc.provider.Grant.find(grantId);
    }
    const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    session.grantIdFor(client.clientId, grant.jti);
    return grant;
  },
});

provider.listen(port, '127.0.0.1', () => {
  // the fixture waits for this line
  console.log(`oidc-provider listening on ${issuer}`);
});

import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getSession } from "@/server/auth/next-auth";
import { authorizeFields, prepareConsent, type AuthorizeParams } from "@/server/oauth/authorize";
import { isOAuthError } from "@/server/oauth/errors";
import { getServices } from "@/server/services";
import { AuthCard } from "../../_components/auth-card";

export const metadata: Metadata = { title: "Autorizar app" };
export const dynamic = "force-dynamic";

type Search = Record<string, string | string[] | undefined>;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The end user's consent page (authorization_endpoint). Signs the user in first and comes back to
 * the same request; shows the app and each scope; Approve / Deny post to the decision endpoint,
 * which re-validates everything. Framing is forbidden (server/http/security-headers.ts: frame-ancestors 'none', like every page).
 */
export default async function AuthorizePage({ searchParams }: { searchParams: Promise<Search> }) {
  const search = await searchParams;
  const params = Object.fromEntries(authorizeFields.map((k) => [k, first(search[k]) ?? null])) as AuthorizeParams;
  const session = await getSession();
  if (!session?.user?.tenantId) {
    const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null) as [string, string][]);
    redirect(`/login?callbackUrl=${encodeURIComponent(`/oauth/authorize?${query}`)}`);
  }
  const { db } = await getServices();
  let consent: Awaited<ReturnType<typeof prepareConsent>>;
  try {
    consent = await prepareConsent(db, { userId: session.user.id, tenantId: session.user.tenantId }, params, new Date());
  } catch (e) {
    if (!isOAuthError(e)) throw e;
    return (
      <AuthCard title="Não foi possível autorizar" subtitle="O pedido de autorização do app é inválido.">
        <p className="alert alert-error" role="alert">
          <code>{e.error}</code>: {e.description}
        </p>
        <p className="muted">Avise o desenvolvedor do app. Nenhum acesso foi concedido.</p>
      </AuthCard>
    );
  }
  const { client, scopes } = consent;
  return (
    <AuthCard title={`Autorizar ${client.name}?`} subtitle={`Conectado como ${session.user.email} (${session.user.name}).`}>
      <div className="stack">
        <div className="row">
          {client.logo_url && (
            // eslint-disable-next-line @next/next/no-img-element
            <img src={client.logo_url} alt={`Logo de ${client.name}`} width={48} height={48} referrerPolicy="no-referrer" />
          )}
          <div>
            <strong>{client.name}</strong>
            <div className="small">
              {client.homepage_url && (
                <a href={client.homepage_url} rel="noopener noreferrer" target="_blank">
                  Site do app
                </a>
              )}
              {client.homepage_url && client.privacy_url && " · "}
              {client.privacy_url && (
                <a href={client.privacy_url} rel="noopener noreferrer" target="_blank">
                  Política de privacidade
                </a>
              )}
            </div>
          </div>
        </div>
        <p>Este app está pedindo permissão para:</p>
        <ul aria-label="Permissões pedidas">
          {scopes.map((s) => (
            <li key={s.scope}>
              {s.description} <code className="small">{s.scope}</code> {s.sensitive && <span className="badge badge-pending">Sensível</span>}
            </li>
          ))}
        </ul>
        <p className="small muted">
          Você poderá revogar o acesso a qualquer momento em Apps → Apps autorizados. Depois da decisão você volta para{" "}
          <code>{new URL(consent.redirect_uri).origin}</code>.
        </p>
        <form method="post" action="/api/oauth/authorize/decision" className="row">
          {authorizeFields
            .filter((k) => k !== "response_type" && params[k] !== null)
            .map((k) => (
              <input key={k} type="hidden" name={k} value={params[k]!} />
            ))}
          <button className="btn btn-primary" type="submit" name="approve" value="true">
            Autorizar
          </button>
          <button className="btn btn-ghost" type="submit" name="approve" value="false">
            Negar
          </button>
        </form>
      </div>
    </AuthCard>
  );
}

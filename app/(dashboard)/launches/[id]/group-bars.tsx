import { groupStatusLabel } from "../labels";

export interface LaunchGroupView {
  position: number;
  id_group: string;
  name: string;
  invite_url: string | null;
  members: number;
  clicks: number;
  status: string;
  /** The launch's numbers the platform has not put in this group (they send nothing to it until it does). */
  unreached?: { id_channel: string; reason: string; attempts: number; next_attempt_at: string | null }[];
}

/** Why a number is not in a group, in the dashboard's words. */
const unreachedReason: Record<string, string> = {
  not_added: "não entrou na criação (sem WhatsApp?)",
  not_admin: "não é admin num grupo só de admins",
  not_in_group: "envio recusado: não está no grupo",
  unconfirmed: "não foi possível confirmar",
  no_number: "número do canal desconhecido",
  "403": "recusado pela privacidade do número",
  "408": "saiu do grupo há pouco",
};

const shortTime = (iso: string) => new Date(iso).toLocaleString("pt-BR", { timeZone: "America/Sao_Paulo", hour: "2-digit", minute: "2-digit" });

/**
 * The launch's groups in the order the link fills them: one bar per group up to its capacity, with
 * a mark where it counts as full (capacity − margin).
 */
export function GroupBars({
  groups,
  capacity,
  margin,
  currentGroup,
}: {
  groups: LaunchGroupView[];
  capacity: number;
  margin: number;
  currentGroup?: string | null;
}) {
  const fullAt = Math.max(0, capacity - margin);
  const pct = (n: number) => `${capacity > 0 ? Math.min(100, (n / capacity) * 100) : 0}%`;
  return (
    <ol className="group-bars" aria-label="Grupos do lançamento">
      {groups.map((g) => (
        <li key={g.id_group} className={`group-bar group-${g.status}`} data-testid={`launch-group-${g.position}`}>
          <div className="row space-between wrap">
            <span>
              <strong>#{g.position}</strong> {g.name} <span className={`badge badge-group-${g.status}`}>{groupStatusLabel[g.status] ?? g.status}</span>
              {currentGroup === g.id_group && <span className="badge badge-info"> Recebendo agora</span>}
            </span>
            <span className="muted small">
              <span data-testid="group-members">{g.members}</span> / {fullAt} membros · {g.clicks} {g.clicks === 1 ? "clique" : "cliques"}
            </span>
          </div>
          <div
            className="progress group-progress"
            role="progressbar"
            aria-label={`Ocupação do grupo ${g.name}`}
            aria-valuemin={0}
            aria-valuemax={capacity}
            aria-valuenow={Math.min(g.members, capacity)}
            aria-valuetext={`${g.members} de ${fullAt} membros até encher (capacidade ${capacity})`}
          >
            <span className="progress-sent" style={{ width: pct(g.members) }} />
            <span className="group-full-mark" style={{ left: pct(fullAt) }} aria-hidden="true" />
          </div>
          {(g.unreached ?? []).length > 0 && (
            <ul className="small group-unreached" aria-label={`Números fora do grupo ${g.name}`} data-testid="group-unreached">
              {(g.unreached ?? []).map((u) => (
                <li key={u.id_channel}>
                  Canal <code>{u.id_channel}</code> não está no grupo: {unreachedReason[u.reason] ?? `recusado (${u.reason})`}
                  {" · "}
                  {u.next_attempt_at
                    ? `nova tentativa às ${shortTime(u.next_attempt_at)} (${u.attempts} feitas)`
                    : `sem novas tentativas (${u.attempts} feitas)`}
                </li>
              ))}
            </ul>
          )}
          <p className="muted small group-meta">
            <code>{g.id_group}</code>
            {g.invite_url && (
              <>
                {" · "}
                <a href={g.invite_url} target="_blank" rel="noreferrer">
                  {g.invite_url}
                </a>
              </>
            )}
          </p>
        </li>
      ))}
    </ol>
  );
}

import { groupStatusLabel } from "../labels";

export interface LaunchGroupView {
  position: number;
  id_group: string;
  name: string;
  invite_url: string | null;
  members: number;
  clicks: number;
  status: string;
}

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

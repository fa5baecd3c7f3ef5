import type { RouterOutputs } from "../../../_lib/trpc";

type Poll = NonNullable<RouterOutputs["campaigns"]["info"]["poll"]>;

/**
 * A poll campaign's votes per option, summed over its groups (info-campaign `poll`), as horizontal bars: each
 * option's share of all votes. Where the platform does not report votes, it says so instead of drawing zeros.
 */
export function PollResults({ poll, live }: { poll: Poll; live: boolean }) {
  if (!poll.votes_available) {
    return (
      <>
        <p className="poll-question">{poll.question}</p>
        <p className="muted small" data-testid="poll-votes-unavailable">
          Votos indisponíveis neste provedor: esta versão do gateway não repassa os votos das enquetes (a partir da Evolution API 2.3.7 eles chegam).
        </p>
        <ul className="poll-options-plain">
          {poll.options.map((o) => (
            <li key={o.text}>{o.text}</li>
          ))}
        </ul>
      </>
    );
  }
  const total = poll.options.reduce((sum, o) => sum + (o.votes ?? 0), 0);
  const most = Math.max(0, ...poll.options.map((o) => o.votes ?? 0));
  return (
    <figure className="poll-chart" data-testid="poll-results" aria-label={`Votos: ${poll.question}`}>
      <figcaption className="poll-question">
        {poll.question}{" "}
        <span className="muted small">
          · {poll.multiple_answers ? "várias respostas por pessoa" : "uma resposta por pessoa"} · {total} {total === 1 ? "voto" : "votos"}
          {live && " · atualizando a cada 2 s"}
        </span>
      </figcaption>
      <ul className="poll-bars">
        {poll.options.map((o) => {
          const votes = o.votes ?? 0;
          const percent = total > 0 ? Math.round((votes / total) * 100) : 0;
          return (
            <li key={o.text} className="poll-row" data-testid="poll-option" data-option={o.text} data-votes={votes}>
              <span className="poll-label">{o.text}</span>
              <span className="poll-track" aria-hidden="true">
                <span className={votes > 0 && votes === most ? "poll-fill poll-fill-top" : "poll-fill"} style={{ width: `${percent}%` }} />
              </span>
              <span className="poll-count">
                <strong>{votes}</strong> <span className="muted small">({percent}%)</span>
              </span>
            </li>
          );
        })}
      </ul>
    </figure>
  );
}

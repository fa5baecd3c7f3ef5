"use client";

/** A group's figures of the period as launch-analytics answers them. */
interface GroupFigures {
  id_group: string;
  name: string;
  joins: number;
  members: number;
  buyers: number;
}

/**
 * Which group converted: the period's buyers (purchases the marketplaces' webhooks reported, refunds taken
 * out) per group they joined, with the share of the period's joins that bought.
 */
export function BuyersByGroup({ total, groups }: { total: number; groups: GroupFigures[] }) {
  return (
    <div className="stack">
      <p>
        <strong data-testid="buyers-total">{total}</strong> {total === 1 ? "comprador" : "compradores"} no período.
      </p>
      <div className="table-scroll">
        <table className="table" aria-label="Compradores por grupo">
          <thead>
            <tr>
              <th scope="col">Grupo</th>
              <th scope="col" className="num">
                Entradas
              </th>
              <th scope="col" className="num">
                Membros agora
              </th>
              <th scope="col" className="num">
                Compradores
              </th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.id_group}>
                <td>{g.name}</td>
                <td className="num">{g.joins}</td>
                <td className="num">{g.members}</td>
                <td className="num" data-testid="group-buyers">
                  {g.buyers}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

import { redirect } from "next/navigation";
import { getSession } from "@/server/auth/next-auth";

export const dynamic = "force-dynamic";

export default async function Home() {
  redirect((await getSession()) ? "/overview" : "/login");
}

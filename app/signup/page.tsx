import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { getSession } from "@/server/auth/next-auth";
import { AuthCard } from "../_components/auth-card";
import { SignupForm } from "./signup-form";

export const metadata: Metadata = { title: "Criar conta" };

export default async function SignupPage() {
  if (await getSession()) redirect("/channels");
  return (
    <AuthCard title="Criar conta" subtitle="Cadastre sua empresa e comece a enviar campanhas para seus grupos.">
      <SignupForm />
      <p className="auth-switch">
        Já tem conta? <Link href="/login">Entrar</Link>
      </p>
    </AuthCard>
  );
}

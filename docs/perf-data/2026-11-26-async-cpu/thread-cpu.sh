#!/bin/bash
# usage: cpu.sh <tree> <label> <size> : per-thread CPU ns per excerpt over a whole --only $subj run
tree=$1; label=$2; size=$3; subj=${4:-replicated-async}
out=${OUT:-/tmp/thread-cpu}/$label; mkdir -p $out
cd $tree
load0=$(cut -d' ' -f1-3 /proc/loadavg)
bin/qe ratios --replicated --only $subj --sizes $size --rounds 40 --warmup-rounds 10 --slice 50000 > $out/out.txt 2>&1 &
qpid=$!
jp=""; for i in $(seq 100); do jp=$(pgrep -P $qpid java); [ -n "$jp" ] && break; sleep 0.1; done
while kill -0 $jp 2>/dev/null; do
  snap=$(for t in /proc/$jp/task/*; do n=$(cat $t/comm 2>/dev/null); s=($(sed 's/^.*) //' $t/stat 2>/dev/null)); [ -n "$n" ] && echo "$(basename $t)|$n|${s[11]}|${s[12]}"; done)
  if [ $subj = replicated-async ]; then [ $(echo "$snap" | grep -c "qe-replication") -ge 2 ] && [ $(echo "$snap" | grep -c "qe-writer") -ge 2 ] && echo "$snap" > $out/last; else [ -n "$snap" ] && echo "$snap" > $out/last; fi
  sleep 0.5
done
wait $qpid
python3 - $out "$label" "$load0" <<'P'
import sys,re
o,label,load0=sys.argv[1:4]
txt=open(o+'/out.txt').read()
m=re.search(r'median ([\d.]+) ns',txt); wall=m.group(1) if m else '?'
n=2.5e6
rows={}
order=[]
lines=[l.rstrip('\n').split('|') for l in open(o+'/last')]
lines=[x for x in lines if len(x)==4 and x[2].isdigit() and x[3].isdigit()]
lines.sort(key=lambda x:int(x[0]))
for tid,name,u,s in lines:
    t=int(u)+int(s)
    key=name
    if name.startswith('qe-replication'): key='dutyL' if 'dutyL' not in rows else 'dutyF'
    if name.startswith('qe-writer'): key='writer' if int(u)+int(s)>5 else 'writer(leader)'
    if name=='java': key='app'
    rows[key]=rows.get(key,0)+t
keys=['app','dutyL','dutyF','writer']
cpu={k:rows.get(k,0)*1e7/n for k in keys}
print("%-5s wall %7s ns/msg | CPU ns/excerpt: app %5.0f leader %5.0f follower %5.0f writer %5.0f (sum repl %5.0f) | load %s"%(label,wall,cpu['app'],cpu['dutyL'],cpu['dutyF'],cpu['writer'],cpu['dutyL']+cpu['dutyF']+cpu['writer'],load0))
P
